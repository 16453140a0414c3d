// `sealpost beacon list|publish|close` as a black box: the real CLI against a
// real devnet (the committed mail program) over JSON-RPC.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { beaconDetailCid } from '../../chain/client/accounts/index.ts';
import { getBeacon } from '../../chain/client/client.ts';
import { startTestChain } from '../support/devnet.ts';
import { keyFile, sealpost } from '../support/program-cli.ts';
import { tempDir } from '../support/temp-dir.ts';

const CLI_TEST_MS = 180_000;
const CID_A = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const CID_B = 'bafkreic4tzxutumzav6f6v52z2nebaqyqgx5pnfr6kmrfiyyket2lzusty';

describe('sealpost beacon', () => {
  it(
    'publishes, lists by tag, updates and closes beacons; refuses bad input with one line',
    async () => {
      const cwd = tempDir('sealpost-beacon-');
      const chain = await startTestChain();
      const at = ['--rpc', chain.devnet.rpcUrl, '--program-id', chain.programId];
      const alice = keyFile(cwd, 'alice.json', await chain.funded(1));
      const bob = keyFile(cwd, 'bob.json', await chain.funded(1));

      const pa = await sealpost(
        ['beacon', 'publish', '--key', alice.path, '--tags', '3,1', '--cid', CID_A, ...at],
        cwd,
      );
      expect({ code: pa.code, stderr: pa.stderr }).toEqual({ code: 0, stderr: '' });
      expect(pa.stdout).toMatch(
        new RegExp(`^published the beacon of ${alice.kp.publicKey.toBase58()} \\(\\w+\\)\\n$`),
      );
      const pb = await sealpost(
        ['beacon', 'publish', '--key', bob.path, '--tags', '3', '--cid', CID_B, ...at],
        cwd,
      );
      expect(pb.code).toBe(0);

      const tag3 = await sealpost(['beacon', 'list', '--tag', '3', '--json', ...at], cwd);
      expect(tag3.code).toBe(0);
      const rows = JSON.parse(tag3.stdout) as { owner: string; tags: number[]; cid: string }[];
      expect(rows.map((r) => [r.owner, r.tags, r.cid]).sort()).toEqual(
        [
          [alice.kp.publicKey.toBase58(), [1, 3], CID_A],
          [bob.kp.publicKey.toBase58(), [3], CID_B],
        ].sort(),
      );
      const tag1 = await sealpost(['beacon', 'list', '--tag', '1', ...at], cwd);
      expect(tag1.stdout).toBe(`${alice.kp.publicKey.toBase58()} tags=1,3 ${CID_A}\n`);
      expect((await sealpost(['beacon', 'list', '--tag', '2', ...at], cwd)).stdout).toBe('');

      // Update in place: new tags and CID.
      expect(
        (
          await sealpost(
            ['beacon', 'publish', '--key', alice.path, '--tags', '2', '--cid', CID_B, ...at],
            cwd,
          )
        ).code,
      ).toBe(0);
      const stored = await getBeacon(chain.connection, chain.programId, alice.kp.publicKey);
      expect(stored?.tags).toBe(4n);
      expect(stored && beaconDetailCid(stored)).toBe(CID_B);
      expect((await sealpost(['beacon', 'list', '--tag', '1', ...at], cwd)).stdout).toBe('');

      // Bad input: usage errors (exit 2), a refusal by the program, a missing beacon (exit 1).
      const badTag = await sealpost(['beacon', 'list', '--tag', '64', ...at], cwd);
      expect(badTag.code).toBe(2);
      expect(badTag.stderr).toMatch(/0\.\.63/);
      const badTags = await sealpost(
        ['beacon', 'publish', '--key', bob.path, '--tags', '1,x', '--cid', CID_A, ...at],
        cwd,
      );
      expect(badTags.code).toBe(2);
      const longCid = await sealpost(
        ['beacon', 'publish', '--key', bob.path, '--tags', '1', '--cid', 'c'.repeat(97), ...at],
        cwd,
      );
      expect(longCid.code).toBe(2);
      expect(longCid.stderr).toMatch(/--cid/);
      const broken = join(cwd, 'broken.json');
      writeFileSync(broken, 'not a key');
      const badKey = await sealpost(['beacon', 'close', '--key', broken, ...at], cwd);
      expect(badKey.code).toBe(1);
      expect(badKey.stderr).toMatch(/--key/);
      const poor = keyFile(cwd, 'poor.json');
      await chain.airdrop(poor.kp.publicKey, 1_000_000);
      const refused = await sealpost(
        ['beacon', 'publish', '--key', poor.path, '--tags', '1', '--cid', CID_A, ...at],
        cwd,
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/PublishBeacon refused by the mail program: InsufficientFunds \(15\)/);
      expect(await getBeacon(chain.connection, chain.programId, poor.kp.publicKey)).toBeNull();

      const closed = await sealpost(['beacon', 'close', '--key', bob.path, ...at], cwd);
      expect(closed.code).toBe(0);
      expect(await getBeacon(chain.connection, chain.programId, bob.kp.publicKey)).toBeNull();
      const again = await sealpost(['beacon', 'close', '--key', bob.path, ...at], cwd);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/has no beacon/);
      const all = JSON.parse((await sealpost(['beacon', 'list', '--json', ...at], cwd)).stdout) as {
        owner: string;
      }[];
      expect(all.map((r) => r.owner)).toEqual([alice.kp.publicKey.toBase58()]);
    },
    CLI_TEST_MS,
  );
});
