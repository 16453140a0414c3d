// Sealpost's post-link step: turns the relocatable object from
//   clang-19 -target bpfel -mcpu=v2 -O2 -ffreestanding -fno-builtin -nostdlib -fno-stack-protector -c
// into an SBPFv0 shared object the Solana loader accepts (see ABI.md and the
// loader's ELF rules). Layout, every section at file offset == virtual address:
//   ELF header, program headers (PT_LOAD text, PT_LOAD rodata, PT_LOAD dynamic
//   tables, PT_DYNAMIC), .text, .rodata, .dynamic, .dynsym, .dynstr, .rel.dyn,
//   .shstrtab, section headers.
// Addresses in the image are file offsets; the loader adds the 4 GiB region
// base through the R_BPF_64_RELATIVE relocations written here. Calls between
// sections become pc-relative; syscalls stay `call -1` with a dynamic
// R_BPF_64_32 by name; `callx` gets its register moved from dst to imm (the
// SBPFv0 encoding). Output is a pure function of the input bytes.
import {
  ElfLinkError,
  type ObjectFile,
  type ObjSection,
  type ObjSymbol,
  R_BPF,
  readObject,
  SHF,
  SHN_COMMON,
  SHN_UNDEF,
  SHT,
} from './elf-object.ts';
import { type DynReloc, EHDR, PHDR, writeSharedObject } from './elf-write.ts';

export { ElfLinkError } from './elf-object.ts';

export interface LinkedProgram {
  so: Uint8Array;
  textSize: number;
  rodataSize: number;
  /** Syscalls the program imports, in order of first use. */
  syscalls: string[];
}

const OP_LDDW = 0x18;
const OP_CALL = 0x85;
const OP_CALLX = 0x8d;
const STT_FUNC = 2;

const alignUp = (n: number, a: number) => Math.ceil(n / a) * a;
const hex = (n: number) => `0x${n.toString(16)}`;

function isSyscallName(name: string): boolean {
  return name === 'abort' || /^sol_[A-Za-z0-9_]+$/.test(name);
}

function classify(obj: ObjectFile): { text: ObjSection[]; ro: ObjSection[] } {
  const text: ObjSection[] = [];
  const ro: ObjSection[] = [];
  const writable = (s: ObjSection) => {
    const held = obj.symbols
      .filter((y) => y.shndx === s.index && y.name && y.type !== 3)
      .map((y) => `\`${y.name}\``);
    const what = held.length ? ` (holds ${held.join(', ')})` : '';
    return new ElfLinkError(
      `writable section ${s.name}${what}: SBF programs cannot have writable globals; ` +
        'make the data const or keep state in accounts / on the stack',
    );
  };
  for (const s of obj.sections) {
    if (!(s.flags & SHF.ALLOC)) continue;
    if (s.flags & SHF.WRITE || s.type === SHT.NOBITS) throw writable(s);
    if (s.type !== SHT.PROGBITS)
      throw new ElfLinkError(`unsupported loadable section ${s.name} (type ${s.type})`);
    if (s.flags & SHF.EXECINSTR) {
      if (s.size % 8 !== 0)
        throw new ElfLinkError(`code section ${s.name} is not a whole number of instructions`);
      text.push(s);
    } else {
      ro.push(s);
    }
  }
  const common = obj.symbols.find((y) => y.shndx === SHN_COMMON);
  if (common)
    throw new ElfLinkError(
      `writable global \`${common.name}\` (common symbol): SBF programs cannot have writable globals`,
    );
  if (text.length === 0) throw new ElfLinkError('the object has no code');
  return { text, ro: ro.filter((s) => s.size > 0) };
}

/** Links a relocatable BPF object (clang-19 output) into an SBPFv0 program. */
export function linkSbf(object: Uint8Array, entry = 'entrypoint'): LinkedProgram {
  const obj = readObject(object);
  const { text, ro } = classify(obj);
  const phnum = ro.length ? 4 : 3;
  const base = new Map<number, number>();
  let off = EHDR + PHDR * phnum;
  const textStart = off;
  for (const s of text) {
    off = alignUp(off, Math.max(8, s.align));
    base.set(s.index, off);
    off += s.size;
  }
  const textEnd = off;
  let roStart = textEnd;
  for (const [i, s] of ro.entries()) {
    off = alignUp(off, s.align);
    if (i === 0) roStart = off;
    base.set(s.index, off);
    off += s.size;
  }
  const roEnd = off;
  const image = new Uint8Array(roEnd);
  for (const s of [...text, ...ro]) image.set(s.data, base.get(s.index) ?? 0);
  const view = new DataView(image.buffer);

  const inText = (addr: number) => addr >= textStart && addr < textEnd;
  const where = (s: ObjSection, r: number) => `${s.name}+${hex(r)}`;
  const address = (sym: ObjSymbol | undefined, at: string): number => {
    if (!sym) throw new ElfLinkError(`relocation at ${at} names a missing symbol`);
    const b = base.get(sym.shndx);
    if (b !== undefined) return b + sym.value;
    if (sym.shndx === SHN_UNDEF)
      throw new ElfLinkError(`undefined symbol \`${sym.name}\` referenced at ${at}`);
    const sec = obj.sections[sym.shndx]?.name ?? `#${sym.shndx}`;
    throw new ElfLinkError(`symbol \`${sym.name || sec}\` at ${at} is in ${sec}, which is not loaded`);
  };

  const syscalls: string[] = [];
  const relocs: DynReloc[] = [];
  const syscallSites = new Set<number>();
  for (const s of [...text, ...ro]) {
    const sBase = base.get(s.index) ?? 0;
    const isCode = text.includes(s);
    for (const r of obj.relocs.get(s.index) ?? []) {
      const at = where(s, r.offset);
      const p = sBase + r.offset;
      const sym = obj.symbols[r.sym];
      if (r.type === R_BPF.NONE) continue;
      if (r.offset + (r.type === R_BPF.R64_64 ? 16 : 8) > s.size)
        throw new ElfLinkError(`relocation at ${at} is out of bounds`);
      if (isCode && r.type === R_BPF.R64_64) {
        if (image[p] !== OP_LDDW)
          throw new ElfLinkError(`R_BPF_64_64 at ${at} is not on an lddw instruction`);
        const addend = BigInt.asIntN(
          64,
          (BigInt(view.getUint32(p + 12, true)) << 32n) | BigInt(view.getUint32(p + 4, true)),
        );
        const target = BigInt(address(sym, at)) + addend;
        if (target <= 0n || target >= 1n << 32n)
          throw new ElfLinkError(`address load at ${at} points outside the program`);
        view.setUint32(p + 4, Number(target), true);
        view.setUint32(p + 12, 0, true);
        relocs.push({ offset: p, type: R_BPF.RELATIVE, sym: 0 });
      } else if (isCode && r.type === R_BPF.R64_32) {
        if (image[p] !== OP_CALL) throw new ElfLinkError(`R_BPF_64_32 at ${at} is not on a call instruction`);
        const imm = view.getInt32(p + 4, true);
        if (sym && sym.shndx === SHN_UNDEF) {
          if (!isSyscallName(sym.name)) {
            throw new ElfLinkError(
              `undefined function \`${sym.name}\` called at ${at}: only Solana syscalls (sol_*, abort) may stay ` +
                'undefined; define it in the program (there is no libc)',
            );
          }
          if (imm !== -1) throw new ElfLinkError(`syscall \`${sym.name}\` at ${at} has an addend`);
          let idx = syscalls.indexOf(sym.name);
          if (idx < 0) idx = syscalls.push(sym.name) - 1;
          relocs.push({ offset: p, type: R_BPF.R64_32, sym: idx + 2 });
          syscallSites.add(p);
        } else {
          const target = address(sym, at) + (imm + 1) * 8;
          if (!inText(target) || (target - textStart) % 8 !== 0) {
            throw new ElfLinkError(`call at ${at} targets ${hex(target)}, which is not code`);
          }
          view.setInt32(p + 4, (target - (p + 8)) / 8, true);
        }
      } else if (!isCode && r.type === R_BPF.ABS64) {
        const target = BigInt(address(sym, at)) + view.getBigInt64(p, true);
        if (target <= 0n || target >= 1n << 32n)
          throw new ElfLinkError(`pointer at ${at} points outside the program`);
        // SBPFv0 encoding: the loader reads the address from the upper half and writes region base + it back.
        view.setUint32(p, 0, true);
        view.setUint32(p + 4, Number(target), true);
        relocs.push({ offset: p, type: R_BPF.RELATIVE, sym: 0 });
      } else {
        throw new ElfLinkError(`unsupported relocation type ${r.type} in ${s.name} at ${at}`);
      }
    }
  }
  for (let p = textStart; p < textEnd; p += 8) {
    if (image[p] === OP_CALL && view.getInt32(p + 4, true) === -1 && !syscallSites.has(p)) {
      throw new ElfLinkError(`unresolved call at text+${hex(p - textStart)}`);
    }
    if (image[p] === OP_CALLX) {
      // clang puts callx's register in dst; SBPFv0 reads it from imm.
      const reg = (image[p + 1] ?? 0) & 0xf || view.getInt32(p + 4, true);
      view.setInt32(p + 4, reg, true);
    }
    if (image[p] === OP_LDDW) p += 8;
  }

  const entrySym = obj.symbols.find((y) => y.name === entry && y.type === STT_FUNC && base.has(y.shndx));
  if (!entrySym || !text.some((s) => s.index === entrySym.shndx)) {
    throw new ElfLinkError(`no function \`${entry}\` in the object (the program's entrypoint)`);
  }
  const entryAddr = address(entrySym, entry);
  relocs.sort((a, b) => a.offset - b.offset);
  return {
    so: writeSharedObject({
      image,
      textStart,
      textEnd,
      roStart,
      roEnd,
      hasRo: ro.length > 0,
      entryAddr,
      entrySym,
      syscalls,
      relocs,
    }),
    textSize: textEnd - textStart,
    rodataSize: roEnd - roStart,
    syscalls,
  };
}
