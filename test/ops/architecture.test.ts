// The layout's rules, checked on every import of the sources (docs/architecture.md):
// each role folder imports only the roles below it, the pipeline's peers
// (edge listeners, delivery, spooler, pinning) reach each other only through
// an intake or a factory, the contracts and the program schema import nothing
// of ours, the chain client runs in a browser (no `node:` module), and
// docs/architecture.md names every role folder there is.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SOURCE_DIRS = ['src', 'chain', 'delivery', 'spooler', 'pinning', 'webmail/src'];

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) walk(path, out);
    else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

interface Edge {
  from: string;
  to: string;
  /** The specifier as written. */
  spec: string;
}

const SPEC = /(?:\bfrom|\bimport)\s*\(?\s*['"]([^'"\n]+)['"]/g;

function imports(file: string): { relative: Edge[]; bare: string[] } {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const rel: Edge[] = [];
  const bare: string[] = [];
  for (const m of text.matchAll(SPEC)) {
    const spec = m[1] as string;
    if (spec.startsWith('.')) rel.push({ from: file, to: normalize(join(dirname(file), spec)), spec });
    else bare.push(spec);
  }
  return { relative: rel, bare };
}

/** The role of a repository path, as docs/architecture.md names them. */
function roleOf(path: string): string {
  const [top, second] = path.split('/');
  if (top === 'src' || top === 'chain') return `${top}/${second}`;
  if (top === 'webmail') return 'webmail';
  return top as string;
}

const LOW = ['src/contracts', 'chain/protocol', 'chain/client'];
const CORE = [...LOW, 'src/core'];
const MAIL = [...CORE, 'src/mail'];
/** The pipeline's peers, and the one way into each of them from another. */
const PEERS = ['src/edge', 'delivery', 'spooler', 'pinning'];
const PEER_ENTRIES = ['delivery/intake/', 'spooler/intake.ts', 'pinning/recipient.ts', 'pinning/operator.ts'];

/** Which roles each role may import (besides itself). */
const ALLOWED: Record<string, readonly string[]> = {
  'src/contracts': [],
  'chain/protocol': [],
  'chain/client': ['chain/protocol'],
  'chain/program': ['chain/protocol', 'chain/client'],
  'chain/devnet': ['chain/protocol', 'chain/client', 'chain/program'],
  'src/core': LOW,
  'src/mail': CORE,
  'src/edge': MAIL,
  delivery: MAIL,
  spooler: MAIL,
  pinning: MAIL,
  'src/run': [...MAIL, ...PEERS, 'chain/program', 'chain/devnet'],
  'src/cli': [...MAIL, ...PEERS, 'chain/program', 'chain/devnet', 'src/run'],
  webmail: ['src/contracts', 'chain/protocol', 'chain/client', 'src/mail'],
};

const files = SOURCE_DIRS.flatMap((d) => walk(d));
const edges = files.flatMap((f) => imports(f).relative);

describe('the import directions', () => {
  it('every source file is in a role folder the rules know', () => {
    const unknown = [...new Set(files.map(roleOf))].filter((r) => !(r in ALLOWED));
    expect(unknown).toEqual([]);
  });

  it('each role imports only the roles below it; peers only through an intake or a factory', () => {
    const wrong = edges
      .filter((e) => {
        const from = roleOf(e.from);
        const to = roleOf(e.to);
        if (from === to) return false;
        if ((ALLOWED[from] ?? []).includes(to)) return false;
        const peerEntry = PEERS.includes(from) && PEERS.includes(to);
        return !(peerEntry && PEER_ENTRIES.some((p) => e.to === p || e.to.startsWith(p)));
      })
      .map((e) => `${e.from} -> ${e.to}`);
    expect(wrong).toEqual([]);
  });

  it('the contracts, and the program schema, import nothing of ours', () => {
    const leaf = edges.filter(
      (e) =>
        (roleOf(e.from) === 'src/contracts' && roleOf(e.to) !== 'src/contracts') ||
        e.from === 'chain/protocol/schema.ts',
    );
    expect(leaf.map((e) => `${e.from} -> ${e.spec}`)).toEqual([]);
  });

  it('the chain client and the schema run in a browser: no node: modules', () => {
    const browser = files.filter(
      (f) =>
        f.startsWith('chain/client/') ||
        (f.startsWith('chain/protocol/') && !f.startsWith('chain/protocol/gen/')),
    );
    expect(browser.length).toBeGreaterThan(20);
    const nodeOnly = browser.flatMap((f) =>
      imports(f)
        .bare.filter((s) => s.startsWith('node:'))
        .map((s) => `${f}: ${s}`),
    );
    expect(nodeOnly).toEqual([]);
  });

  it('the rules notice a wrong import', () => {
    // A core module reaching up into an edge listener, and a peer reaching past an intake.
    const probe = (from: string, to: string) => {
      const a = roleOf(from);
      const b = roleOf(to);
      if ((ALLOWED[a] ?? []).includes(b)) return true;
      return PEERS.includes(a) && PEERS.includes(b) && PEER_ENTRIES.some((p) => to.startsWith(p));
    };
    expect(probe('src/core/log.ts', 'src/edge/api/server.ts')).toBe(false);
    expect(probe('src/edge/mx/mx-server.ts', 'delivery/pipeline.ts')).toBe(false);
    expect(probe('src/edge/mx/mx-server.ts', 'delivery/intake/accept.ts')).toBe(true);
    expect(probe('chain/client/pda.ts', 'src/core/log.ts')).toBe(false);
  });
});

describe('docs/architecture.md', () => {
  it('names every role folder', () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const roles = [...new Set(files.map(roleOf))].filter((r) => r !== 'webmail');
    const missing = roles.filter((r) => !doc.includes(`\`${r}/\``));
    expect(missing).toEqual([]);
    // And names no folder that is not there.
    for (const m of doc.matchAll(/`((?:src|chain)\/[a-z-]+)\/`/g)) {
      expect(statSync(join(ROOT, m[1] as string)).isDirectory(), m[1]).toBe(true);
    }
  });
});
