// Builds the mail program: clang-19 (Debian's, stock BPF backend) with pinned
// flags, then our own post-link step (elf-link.ts) into an SBPFv0 shared object.
//   npm run build:program             build chain/program/mail_program.so
//   npm run build:program -- --check  rebuild to a temp file; fail unless byte-identical to the committed .so
//   npm run build:program -- SRC.c OUT.so
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { linkSbf } from './elf-link.ts';

const run = promisify(execFile);

export const CLANG = 'clang-19';
/**
 * Pinned compiler flags. `-bpf-stack-size=4096`: SBF stack frames are 4 KiB
 * (clang's BPF default limit is the kernel's 512 bytes). Compiling from the
 * source's directory with a relative name keeps `__FILE__` machine-independent.
 */
export const CFLAGS: readonly string[] = [
  '-target',
  'bpfel',
  '-mcpu=v2',
  '-O2',
  '-std=gnu17',
  '-ffreestanding',
  '-fno-builtin',
  '-nostdlib',
  '-fno-stack-protector',
  '-fno-ident',
  '-mllvm',
  '-bpf-stack-size=4096',
  '-Wall',
];

const here = dirname(fileURLToPath(import.meta.url));
export const MAIL_SOURCE = resolve(here, '../src/mail.c');
export const MAIL_SO = resolve(here, '../mail_program.so');

export interface BuildResult {
  outFile: string;
  size: number;
  textSize: number;
  rodataSize: number;
  syscalls: string[];
  sha256: string;
}

async function clangMajor(): Promise<number> {
  try {
    const { stdout } = await run(CLANG, ['--version']);
    return Number(/clang version (\d+)\./.exec(stdout)?.[1] ?? 0);
  } catch {
    throw new Error(`${CLANG} not found: install Debian's clang-19 llvm-19 lld-19`);
  }
}

/** Compiles one C file and links it to `outFile` (an SBPFv0 program). */
export async function buildSbfProgram(cFile: string, outFile: string): Promise<BuildResult> {
  const major = await clangMajor();
  if (major !== 19) throw new Error(`${CLANG} reports major version ${major}; the build is pinned to 19`);
  const tmp = await mkdtemp(join(tmpdir(), 'sbf-build-'));
  try {
    const obj = join(tmp, 'program.o');
    try {
      await run(CLANG, [...CFLAGS, '-c', basename(cFile), '-o', obj], { cwd: dirname(resolve(cFile)) });
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      throw new Error(`${CLANG} failed on ${cFile}:\n${err.stderr || err.message}`);
    }
    const linked = linkSbf(new Uint8Array(await readFile(obj)));
    await writeFile(outFile, linked.so);
    return {
      outFile,
      size: linked.so.length,
      textSize: linked.textSize,
      rodataSize: linked.rodataSize,
      syscalls: linked.syscalls,
      sha256: createHash('sha256').update(linked.so).digest('hex'),
    };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

function describe(r: BuildResult): string {
  const where = relative(process.cwd(), r.outFile) || r.outFile;
  return (
    `${where}: ${r.size} bytes (text ${r.textSize}, rodata ${r.rodataSize}), sha256 ${r.sha256}\n` +
    `  syscalls: ${r.syscalls.join(', ') || 'none'}`
  );
}

async function main(argv: string[]): Promise<number> {
  const check = argv.includes('--check');
  const [src = MAIL_SOURCE, out = MAIL_SO] = argv.filter((a) => a !== '--check');
  if (!check) {
    console.log(describe(await buildSbfProgram(src, out)));
    return 0;
  }
  const committed = await readFile(out).catch(() => null);
  if (!committed) {
    console.error(`--check: ${out} does not exist; run npm run build:program and commit it`);
    return 1;
  }
  const tmp = await mkdtemp(join(tmpdir(), 'sbf-check-'));
  try {
    const rebuilt = await buildSbfProgram(src, join(tmp, 'program.so'));
    const bytes = await readFile(rebuilt.outFile);
    if (Buffer.compare(bytes, committed) !== 0) {
      const sha = createHash('sha256').update(committed).digest('hex');
      console.error(
        `--check failed: ${relative(process.cwd(), out)} (${committed.length} bytes, sha256 ${sha}) is not what ` +
          `${relative(process.cwd(), src)} builds to (${rebuilt.size} bytes, sha256 ${rebuilt.sha256}); ` +
          'rebuild with npm run build:program and commit it',
      );
      return 1;
    }
    console.log(
      `--check ok: ${relative(process.cwd(), out)} is byte-identical to a fresh build (${rebuilt.size} bytes)`,
    );
    return 0;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(1);
    },
  );
}
