// `sealpost pind` as a black box: the real CLI on random ports, used over
// HTTP, stopped with a signal; then the local admin commands on its data.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { computeCid } from '../../src/mail/cid.ts';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');
// Every CLI start loads the TypeScript sources through tsx: seconds each on a busy machine.
const CLI_TEST_MS = 150_000;

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

interface Started {
  child: ChildProcess;
  pinUrl: string;
  gatewayUrl: string;
}

function startDaemon(args: string[], cwd: string): Promise<Started> {
  const child = spawn(process.execPath, [BIN, 'pind', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr?.on('data', (d) => {
    err += d;
  });
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`pind did not start: ${out}${err}`)), 60_000);
    child.stdout?.on('data', (d) => {
      out += d;
      const pinUrl = /pin surface\s+(\S+)/.exec(out)?.[1];
      const gatewayUrl = /gateway\s+(\S+)/.exec(out)?.[1];
      if (pinUrl && gatewayUrl) {
        clearTimeout(timer);
        resolvePromise({ child, pinUrl, gatewayUrl });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`pind exited with ${code}: ${err}`));
    });
  });
}

function run(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { cwd }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((r) => {
    if (child.exitCode !== null) r(child.exitCode);
    else child.once('exit', (code) => r(code));
  });

async function pin(url: string, body: Uint8Array, token?: string): Promise<Response> {
  return fetch(`${url}/pins`, {
    method: 'POST',
    headers: token ? { authorization: `Bearer ${token}` } : {},
    body: body as Uint8Array<ArrayBuffer>,
  });
}

describe('sealpost pind', () => {
  it(
    'serves two listeners, stops on SIGTERM, and its pins are managed with ls, rm and gc',
    async () => {
      const cwd = tempDir('sealpost-pind-cli-');
      const dataDir = join(cwd, 'data');
      const d = await startDaemon(
        ['--data-dir', dataDir, '--listen', '127.0.0.1:0', '--listen', '127.0.0.1:0'],
        cwd,
      );
      expect(d.gatewayUrl).not.toBe(d.pinUrl);
      const bodies = [new TextEncoder().encode('hello\n'), new Uint8Array(600_000).fill(7)];
      const cids: string[] = [];
      for (const b of bodies) {
        const res = await pin(d.pinUrl, b);
        expect(res.status).toBe(201);
        cids.push(((await res.json()) as { cid: string }).cid);
      }
      expect(cids[0]).toBe('bafkreicysg23kiwv34eg2d7qweipxwosdo2py4ldv42nbauguluen5v6am');
      expect(cids[1]).toBe(await computeCid(bodies[1] as Uint8Array));
      expect((await fetch(`${d.gatewayUrl}/ipfs/${cids[0]}`)).status).toBe(200);

      // While the daemon runs, rm drops the pin but leaves the blocks; gc refuses.
      const rmLive = await run(['pind', 'rm', cids[0] as string, '--data-dir', dataDir], cwd);
      expect(rmLive).toMatchObject({ code: 0, stdout: `removed ${cids[0]}\n` });
      expect(rmLive.stderr).toContain('pind is running');
      expect((await fetch(`${d.gatewayUrl}/ipfs/${cids[0]}`)).status).toBe(404);
      const gcLive = await run(['pind', 'gc', '--data-dir', dataDir], cwd);
      expect(gcLive.code).toBe(1);
      expect(gcLive.stderr).toContain('stop it before');

      d.child.kill('SIGTERM');
      expect(await exited(d.child)).toBe(0);

      const ls = await run(['pind', 'ls', '--data-dir', dataDir], cwd);
      expect(ls.code).toBe(0);
      expect(ls.stdout).toMatch(new RegExp(`^${cids[1]} 600000 \\d{4}-\\d\\d-\\d\\dT`));
      // The 600 kB body is two identical full chunks, a tail and the root: 3 distinct blocks.
      const gc = await run(['pind', 'gc', '--data-dir', dataDir], cwd);
      expect(gc).toMatchObject({
        code: 0,
        stdout: 'deleted 1 block(s) and 0 temp file(s); kept 3 block(s)\n',
      });
      const rm = await run(['pind', 'rm', cids[1] as string, cids[0] as string, '--data-dir', dataDir], cwd);
      expect(rm.code).toBe(1);
      expect(rm.stdout).toBe(`removed ${cids[1]}\n`);
      expect(rm.stderr).toContain(`not pinned: ${cids[0]}`);
      expect(rm.stderr).toContain('deleted 3 unreferenced block(s)');
      expect((await run(['pind', 'ls', '--data-dir', dataDir], cwd)).stdout).toBe('');
      const bad = await run(['pind', 'rm', 'not-a-cid', '--data-dir', dataDir], cwd);
      expect(bad).toMatchObject({ code: 2, stderr: 'error: not a valid CID: "not-a-cid"\n' });
    },
    CLI_TEST_MS,
  );

  it(
    'reads [pind] from the config file: token, cap, one listener for both roles; restart keeps pins',
    async () => {
      const cwd = tempDir('sealpost-pind-cli-');
      writeFileSync(
        join(cwd, 'sealpost.toml'),
        '[pind]\nauth_token = "cli-token"\nmax_pin_bytes = 1000\n[store]\ndata_dir = "state"\n',
      );
      const first = await startDaemon(['--config', 'sealpost.toml', '--listen', '127.0.0.1:0'], cwd);
      expect(first.gatewayUrl).toBe(first.pinUrl);
      expect((await pin(first.pinUrl, new Uint8Array(10))).status).toBe(401);
      expect((await pin(first.pinUrl, new Uint8Array(1001), 'cli-token')).status).toBe(413);
      const ok = await pin(first.pinUrl, new Uint8Array(1000).fill(1), 'cli-token');
      expect(ok.status).toBe(201);
      const { cid } = (await ok.json()) as { cid: string };
      first.child.kill('SIGINT');
      expect(await exited(first.child)).toBe(0);

      const second = await startDaemon(['--config', 'sealpost.toml', '--listen', '127.0.0.1:0'], cwd);
      const back = await fetch(`${second.gatewayUrl}/ipfs/${cid}`);
      expect(back.status).toBe(200);
      expect(new Uint8Array(await back.arrayBuffer())).toEqual(new Uint8Array(1000).fill(1));
    },
    CLI_TEST_MS,
  );

  it(
    'exits 2 on a non-loopback bind without a token and on three --listen',
    async () => {
      const cwd = tempDir('sealpost-pind-cli-');
      const open = await run(['pind', '--data-dir', cwd, '--listen', '0.0.0.0:0'], cwd);
      expect(open.code).toBe(2);
      expect(open.stderr).toContain('not a loopback address, without an auth token');
      const three = await run(
        [
          'pind',
          '--data-dir',
          cwd,
          '--listen',
          '127.0.0.1:0',
          '--listen',
          '127.0.0.1:0',
          '--listen',
          '127.0.0.1:0',
        ],
        cwd,
      );
      expect(three.code).toBe(2);
      expect(three.stderr).toContain('at most two --listen');
    },
    CLI_TEST_MS,
  );
});
