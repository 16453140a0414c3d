// Writes the SBPFv0 shared object elf-link.ts laid out: ELF header, program
// headers, the loaded image (.text, .rodata), then .dynamic, .dynsym, .dynstr,
// .rel.dyn, .shstrtab and the section headers; every section at file offset ==
// virtual address.
import type { ObjSymbol } from './elf-object.ts';
import { R_BPF, SHF, SHN_UNDEF, SHT } from './elf-object.ts';

export interface DynReloc {
  offset: number;
  type: number;
  sym: number;
}

export const EHDR = 64;
export const PHDR = 56;
const SHDR = 64;
const STT_FUNC = 2;
const STB_GLOBAL = 1;
const DT = {
  STRTAB: 5,
  SYMTAB: 6,
  STRSZ: 10,
  SYMENT: 11,
  REL: 17,
  RELSZ: 18,
  RELENT: 19,
  TEXTREL: 22,
  FLAGS: 30,
};
const DT_RELCOUNT = 0x6ffffffa;
const DF_TEXTREL = 4;

const alignUp = (n: number, a: number) => Math.ceil(n / a) * a;

export interface Layout {
  image: Uint8Array;
  textStart: number;
  textEnd: number;
  roStart: number;
  roEnd: number;
  hasRo: boolean;
  entryAddr: number;
  entrySym: ObjSymbol;
  syscalls: string[];
  relocs: DynReloc[];
}

function strtab(names: string[]): { bytes: Uint8Array; at: number[] } {
  const enc = new TextEncoder();
  const parts = names.map((n) => enc.encode(`${n}\0`));
  const at: number[] = [];
  let len = 1;
  for (const p of parts) {
    at.push(len);
    len += p.length;
  }
  const bytes = new Uint8Array(len);
  let o = 1;
  for (const p of parts) {
    bytes.set(p, o);
    o += p.length;
  }
  return { bytes, at };
}

export function writeSharedObject(l: Layout): Uint8Array {
  const dynstr = strtab([l.entrySym.name, ...l.syscalls]);
  const hasRel = l.relocs.length > 0;
  const relCount = l.relocs.filter((r) => r.type === R_BPF.RELATIVE).length;
  const dyn: [number, number][] = [];
  if (hasRel) {
    dyn.push([DT.FLAGS, DF_TEXTREL], [DT.REL, 0], [DT.RELSZ, l.relocs.length * 16], [DT.RELENT, 16]);
    if (relCount) dyn.push([DT_RELCOUNT, relCount]);
  }
  dyn.push([DT.SYMTAB, 0], [DT.SYMENT, 24], [DT.STRTAB, 0], [DT.STRSZ, dynstr.bytes.length]);
  if (hasRel) dyn.push([DT.TEXTREL, 0]);
  dyn.push([0, 0]);

  const dynamicOff = alignUp(l.hasRo ? l.roEnd : l.textEnd, 8);
  const dynsymOff = dynamicOff + dyn.length * 16;
  const dynsymSize = (2 + l.syscalls.length) * 24;
  const dynstrOff = dynsymOff + dynsymSize;
  const relOff = alignUp(dynstrOff + dynstr.bytes.length, 8);
  const relSize = l.relocs.length * 16;
  const secNames = ['.text', ...(l.hasRo ? ['.rodata'] : []), '.dynamic', '.dynsym', '.dynstr'];
  if (hasRel) secNames.push('.rel.dyn');
  secNames.push('.shstrtab');
  const shstr = strtab(secNames);
  const shstrOff = relOff + relSize;
  const shoff = alignUp(shstrOff + shstr.bytes.length, 8);
  const out = new Uint8Array(shoff + SHDR * (secNames.length + 1));
  const v = new DataView(out.buffer);
  const u64 = (at: number, n: number) => v.setBigUint64(at, BigInt(n), true);
  out.set(l.image.subarray(l.textStart), l.textStart);

  for (const [i, [tag, val]] of dyn.entries()) {
    const value =
      tag === DT.REL ? relOff : tag === DT.SYMTAB ? dynsymOff : tag === DT.STRTAB ? dynstrOff : val;
    u64(dynamicOff + i * 16, tag);
    u64(dynamicOff + i * 16 + 8, value);
  }
  const idx = (name: string) => secNames.indexOf(name) + 1;
  const sym = (n: number, name: number, info: number, shndx: number, value: number, size: number) => {
    const at = dynsymOff + n * 24;
    v.setUint32(at, name, true);
    v.setUint8(at + 4, info);
    v.setUint16(at + 6, shndx, true);
    u64(at + 8, value);
    u64(at + 16, size);
  };
  sym(1, dynstr.at[0] ?? 0, (STB_GLOBAL << 4) | STT_FUNC, idx('.text'), l.entryAddr, l.entrySym.size);
  l.syscalls.forEach((_, i) => {
    sym(i + 2, dynstr.at[i + 1] ?? 0, STB_GLOBAL << 4, SHN_UNDEF, 0, 0);
  });
  out.set(dynstr.bytes, dynstrOff);
  for (const [i, r] of l.relocs.entries()) {
    u64(relOff + i * 16, r.offset);
    v.setBigUint64(relOff + i * 16 + 8, (BigInt(r.sym) << 32n) | BigInt(r.type), true);
  }
  out.set(shstr.bytes, shstrOff);

  const phdrs: [number, number, number, number][] = [[1, 5, l.textStart, l.textEnd - l.textStart]];
  if (l.hasRo) phdrs.push([1, 4, l.roStart, l.roEnd - l.roStart]);
  phdrs.push([1, 4, dynamicOff, relOff + relSize - dynamicOff], [2, 4, dynamicOff, dyn.length * 16]);
  for (const [i, [type, flags, at, size]] of phdrs.entries()) {
    const h = EHDR + i * PHDR;
    v.setUint32(h, type, true);
    v.setUint32(h + 4, flags, true);
    for (const f of [8, 16, 24]) u64(h + f, at);
    u64(h + 32, size);
    u64(h + 40, size);
    u64(h + 48, type === 1 ? 0x1000 : 8);
  }

  // name, type, flags, offset, size, link, info, align, entsize
  const shdrs: [string, number, number, number, number, number, number, number, number][] = [
    ['.text', SHT.PROGBITS, SHF.ALLOC | SHF.EXECINSTR, l.textStart, l.textEnd - l.textStart, 0, 0, 8, 0],
  ];
  if (l.hasRo) shdrs.push(['.rodata', SHT.PROGBITS, SHF.ALLOC, l.roStart, l.roEnd - l.roStart, 0, 0, 8, 0]);
  shdrs.push(
    ['.dynamic', 6, SHF.ALLOC, dynamicOff, dyn.length * 16, idx('.dynstr'), 0, 8, 16],
    ['.dynsym', 11, SHF.ALLOC, dynsymOff, dynsymSize, idx('.dynstr'), 1, 8, 24],
    ['.dynstr', SHT.STRTAB, SHF.ALLOC, dynstrOff, dynstr.bytes.length, 0, 0, 1, 0],
  );
  if (hasRel) shdrs.push(['.rel.dyn', SHT.REL, SHF.ALLOC, relOff, relSize, idx('.dynsym'), 0, 8, 16]);
  shdrs.push(['.shstrtab', SHT.STRTAB, 0, shstrOff, shstr.bytes.length, 0, 0, 1, 0]);
  for (const [i, [name, type, flags, at, size, link, info, align, entsize]] of shdrs.entries()) {
    const h = shoff + (i + 1) * SHDR;
    v.setUint32(h, shstr.at[secNames.indexOf(name)] ?? 0, true);
    v.setUint32(h + 4, type, true);
    u64(h + 8, flags);
    u64(h + 16, name === '.shstrtab' ? 0 : at);
    u64(h + 24, at);
    u64(h + 32, size);
    v.setUint32(h + 40, link, true);
    v.setUint32(h + 44, info, true);
    u64(h + 48, align);
    u64(h + 56, entsize);
  }

  out.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], 0);
  v.setUint16(16, 3, true); // ET_DYN
  v.setUint16(18, 247, true); // EM_BPF
  v.setUint32(20, 1, true);
  u64(24, l.entryAddr);
  u64(32, EHDR);
  u64(40, shoff);
  v.setUint32(48, 0, true); // e_flags 0: SBPFv0
  v.setUint16(52, EHDR, true);
  v.setUint16(54, PHDR, true);
  v.setUint16(56, phdrs.length, true);
  v.setUint16(58, SHDR, true);
  v.setUint16(60, secNames.length + 1, true);
  v.setUint16(62, secNames.length, true);
  return out;
}
