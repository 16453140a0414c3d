// Reader for the relocatable BPF object clang emits (ELF64, little-endian,
// ET_REL, EM_BPF): sections, symbols and REL relocations — what elf-link.ts
// needs, nothing more. Pure (Uint8Array in), so it runs anywhere.

export const EM_BPF = 247;

export const SHT = { NULL: 0, PROGBITS: 1, SYMTAB: 2, STRTAB: 3, RELA: 4, NOBITS: 8, REL: 9 } as const;
export const SHF = { WRITE: 0x1, ALLOC: 0x2, EXECINSTR: 0x4 } as const;
export const SHN_UNDEF = 0;
export const SHN_ABS = 0xfff1;
export const SHN_COMMON = 0xfff2;

/** BPF relocation types (LLVM's numbering). */
export const R_BPF = {
  NONE: 0,
  R64_64: 1,
  ABS64: 2,
  ABS32: 3,
  NODYLD32: 4,
  RELATIVE: 8,
  R64_32: 10,
} as const;

export class ElfLinkError extends Error {
  override name = 'ElfLinkError';
}

export interface ObjSection {
  index: number;
  name: string;
  type: number;
  flags: number;
  offset: number;
  size: number;
  link: number;
  info: number;
  align: number;
  data: Uint8Array;
}

export interface ObjSymbol {
  name: string;
  /** STB_* (binding), STT_* (type) */
  bind: number;
  type: number;
  shndx: number;
  value: number;
  size: number;
}

export interface ObjReloc {
  offset: number;
  type: number;
  sym: number;
}

export interface ObjectFile {
  sections: ObjSection[];
  symbols: ObjSymbol[];
  /** Relocations keyed by the index of the section they patch. */
  relocs: Map<number, ObjReloc[]>;
}

function u64(view: DataView, at: number): number {
  const v = view.getBigUint64(at, true);
  if (v > BigInt(Number.MAX_SAFE_INTEGER))
    throw new ElfLinkError(`64-bit value out of range at 0x${at.toString(16)}`);
  return Number(v);
}

function cString(bytes: Uint8Array, start: number): string {
  let end = start;
  while (end < bytes.length && bytes[end] !== 0) end++;
  if (end >= bytes.length) throw new ElfLinkError('unterminated string in string table');
  return new TextDecoder().decode(bytes.subarray(start, end));
}

function slice(bytes: Uint8Array, offset: number, size: number, what: string): Uint8Array {
  if (offset + size > bytes.length) throw new ElfLinkError(`${what} lies outside the file`);
  return bytes.subarray(offset, offset + size);
}

/** Parses a relocatable BPF object; throws ElfLinkError on anything else. */
export function readObject(bytes: Uint8Array): ObjectFile {
  if (bytes.length < 64 || bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46) {
    throw new ElfLinkError('not an ELF file');
  }
  if (bytes[4] !== 2 || bytes[5] !== 1)
    throw new ElfLinkError('not a 64-bit little-endian ELF (use -target bpfel)');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const type = view.getUint16(16, true);
  const machine = view.getUint16(18, true);
  if (type !== 1) throw new ElfLinkError(`expected a relocatable object (ET_REL), got e_type ${type}`);
  if (machine !== EM_BPF) throw new ElfLinkError(`expected EM_BPF (247), got e_machine ${machine}`);
  const shoff = u64(view, 40);
  const shentsize = view.getUint16(58, true);
  const shnum = view.getUint16(60, true);
  const shstrndx = view.getUint16(62, true);
  if (shentsize !== 64 || shnum === 0) throw new ElfLinkError('unsupported section header table');

  const raw: Omit<ObjSection, 'name' | 'data'>[] = [];
  const names: number[] = [];
  for (let i = 0; i < shnum; i++) {
    const at = shoff + i * 64;
    if (at + 64 > bytes.length) throw new ElfLinkError('section header table lies outside the file');
    names.push(view.getUint32(at, true));
    raw.push({
      index: i,
      type: view.getUint32(at + 4, true),
      flags: u64(view, at + 8),
      offset: u64(view, at + 24),
      size: u64(view, at + 32),
      link: view.getUint32(at + 40, true),
      info: view.getUint32(at + 44, true),
      align: Math.max(1, u64(view, at + 48)),
    });
  }
  const shstr = raw[shstrndx];
  if (!shstr || shstr.type !== SHT.STRTAB) throw new ElfLinkError('missing section name table');
  const shstrData = slice(bytes, shstr.offset, shstr.size, 'section name table');
  const sections: ObjSection[] = raw.map((s, i) => ({
    ...s,
    name: cString(shstrData, names[i] ?? 0),
    data: s.type === SHT.NOBITS ? new Uint8Array(0) : slice(bytes, s.offset, s.size, `section ${i}`),
  }));

  const symtab = sections.find((s) => s.type === SHT.SYMTAB);
  const symbols: ObjSymbol[] = [];
  if (symtab) {
    const strtab = sections[symtab.link];
    if (!strtab || strtab.type !== SHT.STRTAB) throw new ElfLinkError('symbol table without a string table');
    const sv = new DataView(symtab.data.buffer, symtab.data.byteOffset, symtab.data.byteLength);
    for (let at = 0; at + 24 <= symtab.data.length; at += 24) {
      const info = sv.getUint8(at + 4);
      symbols.push({
        name: cString(strtab.data, sv.getUint32(at, true)),
        bind: info >> 4,
        type: info & 0xf,
        shndx: sv.getUint16(at + 6, true),
        value: u64(sv, at + 8),
        size: u64(sv, at + 16),
      });
    }
  }

  const relocs = new Map<number, ObjReloc[]>();
  for (const s of sections) {
    if (s.type === SHT.RELA) throw new ElfLinkError(`RELA relocations (${s.name}) are not supported`);
    if (s.type !== SHT.REL) continue;
    const rv = new DataView(s.data.buffer, s.data.byteOffset, s.data.byteLength);
    const list: ObjReloc[] = [];
    for (let at = 0; at + 16 <= s.data.length; at += 16) {
      list.push({ offset: u64(rv, at), type: rv.getUint32(at + 8, true), sym: rv.getUint32(at + 12, true) });
    }
    relocs.set(s.info, list);
  }
  return { sections, symbols, relocs };
}
