// Whether dist/ (the JavaScript build of the TypeScript sources, made by
// bin/build-dist.js) was built from the sources as they are now.
// bin/sealpost.js runs this check on every start, so it stays small: node:fs
// only, node:crypto only when the content must be compared.
//
// dist/build.json records two fingerprints of the sources at build time:
// `stat`, every file's path, size and mtime (one readdir per directory and
// one stat per file: a few milliseconds for ~350 files), and `content`, a
// SHA-256 over every file's path and bytes. A matching `stat` proves dist
// current; when it differs (a file was edited, added or removed, or only
// touched, as a git checkout or a container image copy does), the content
// decides (~10 ms more).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The directories bin/build-dist.js compiles, relative to the package root. */
export const SOURCE_DIRS = ['src', 'chain', 'delivery', 'spooler', 'pinning'];
/**
 * Files outside SOURCE_DIRS whose change also makes dist stale: the build
 * itself, and the lock file (a dependency changed under a build that ran
 * before it).
 */
export const BUILD_INPUTS = ['bin/build-dist.js', 'package-lock.json'];
export const DIST_DIR = 'dist';
export const BUILD_INFO = 'build.json';

/** True for the files the build compiles: TypeScript sources, not tests. */
export function isSource(name) {
  return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts');
}

/** Every compiled source and build input, as sorted paths relative to `root`. */
export function sourceFiles(root) {
  const files = [];
  const walk = (rel) => {
    let entries;
    try {
      entries = readdirSync(join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name !== 'node_modules') walk(path);
      } else if (isSource(e.name)) files.push(path);
    }
  };
  for (const dir of SOURCE_DIRS) walk(dir);
  files.push(...BUILD_INPUTS);
  return files.sort();
}

/** Every file's path, size and mtime, one line each. */
export function statFingerprint(root, files) {
  let text = '';
  for (const f of files) {
    const st = statSync(join(root, f), { throwIfNoEntry: false });
    text += st ? `${f} ${st.size} ${st.mtimeMs}\n` : `${f} missing\n`;
  }
  return text;
}

export function contentFingerprint(root, files) {
  const hash = process.getBuiltinModule('node:crypto').createHash('sha256');
  for (const f of files) {
    hash.update(`${f}\0`);
    try {
      hash.update(readFileSync(join(root, f)));
    } catch {
      hash.update('missing');
    }
    hash.update('\n');
  }
  return hash.digest('hex');
}

/**
 * 'current' when dist/ was built from the sources as they are; 'missing'
 * when there is no complete build; 'stale' when a source changed since.
 */
export function distState(root) {
  let info;
  try {
    info = JSON.parse(readFileSync(join(root, DIST_DIR, BUILD_INFO), 'utf8'));
  } catch {
    return 'missing';
  }
  const files = sourceFiles(root);
  if (info.stat === statFingerprint(root, files)) return 'current';
  return info.content === contentFingerprint(root, files) ? 'current' : 'stale';
}
