// `sealpost serve` starts the submission listeners from [[smtp.listeners]]:
// an operator's config with 465 (implicit TLS) and 587 (STARTTLS), a mail
// password set through the store, a real submission through each listener,
// and a plaintext submission listener refused at start-up.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type OutboundJobData, QUEUE_OUTBOUND } from '../../src/contracts/inbound-jobs.ts';
import { parseConfig } from '../../src/core/config/index.ts';
import { CredentialSealer, createCredentialKeyFile } from '../../src/core/crypto/credential-seal.ts';
import { keypairFromSeed, writeKeypairFile } from '../../src/core/keys/keypair-file.ts';
import { createRedis } from '../../src/core/redis/client.ts';
import { AccountsRepo } from '../../src/core/store/index.ts';
import { createSelfSignedCert } from '../../src/core/tls/self-signed.ts';
import { setMailPassword } from '../../src/mail/reader-keys/mail-password.ts';
import { type Serving, startServe } from '../../src/run/serve/serve.ts';
import { startTestChain } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';
import { tempDir } from '../support/temp-dir.ts';

const DOMAIN = 'mail.test';
const PASSWORD = 'serve test password';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

async function operatorSetup(listenersToml: string) {
  const chain = await startTestChain();
  const mail = await prepareMailChain(chain, DOMAIN);
  const alice = await mail.mailbox();
  const dataDir = tempDir();
  const authorityFile = join(dataDir, 'authority.json');
  writeKeypairFile(authorityFile, keypairFromSeed(mail.authority.secretKey.slice(0, 32)));
  // Default locations under the data directory: credential.key and tls/{cert,key}.pem.
  const credentialKey = createCredentialKeyFile(join(dataDir, 'credential.key'));
  const pair = await createSelfSignedCert(['localhost', '127.0.0.1']);
  mkdirSync(join(dataDir, 'tls'));
  writeFileSync(join(dataDir, 'tls', 'cert.pem'), pair.cert);
  writeFileSync(join(dataDir, 'tls', 'key.pem'), pair.key);
  const prefix = `sptest-subserve-${randomBytes(6).toString('hex')}`;
  const toml = `
[smtp]
hostname = "mx.mail.test"
local_domains = ["${DOMAIN}"]
sender_auth = "none"
submission_max_per_hour = 5
${listenersToml}
[chain]
rpc_url = "${chain.devnet.rpcUrl}"
program_id = "${chain.programId}"
authority_key_file = "${authorityFile}"

[redis]
prefix = "${prefix}"

[log]
level = "silent"
`;
  const configFile = join(dataDir, 'sealpost.toml');
  writeFileSync(configFile, toml);
  const config = parseConfig(toml, { dataDirOverride: dataDir, source: configFile });
  const redis = createRedis(config.redis);
  cleanups.push(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });
  return { chain, alice, config, credentialKey, prefix, redis };
}

describe('sealpost serve: submission listeners', () => {
  it('runs 465 and 587 from [[smtp.listeners]]; both take a submission', async () => {
    const s = await operatorSetup(`
[[smtp.listeners]]
mode = "submissions"
port = 2465

[[smtp.listeners]]
mode = "submission"
port = 2587
tls = "starttls"
`);
    const serving: Serving = await startServe({
      config: s.config,
      logger: pino({ level: 'silent' }),
      components: { smtp: true, workers: false },
      // Every listener on a free port, so a running dev stack (8080, 1993, …) does not collide.
      apiListen: { host: '127.0.0.1', port: 0 },
      mailAccess: { imap: false, pop3: false },
      listenerOverrides: [
        { host: '127.0.0.1', port: 0 },
        { host: '127.0.0.1', port: 0 },
      ],
    });
    cleanups.push(() => serving.close());
    expect(serving.listeners.map((l) => l.mode)).toEqual(['submissions', 'submission']);

    const wallet = s.alice.publicKey.toBase58();
    const accounts = new AccountsRepo(serving.store.db);
    await accounts.create(wallet, { source: 'admin' });
    await setMailPassword(
      { accounts, sealer: new CredentialSealer(s.credentialKey), db: serving.store.db },
      wallet,
      PASSWORD,
    );
    const from = `${wallet}@${DOMAIN}`;

    const sent: string[] = [];
    for (const l of serving.listeners) {
      const t = nodemailer.createTransport({
        host: '127.0.0.1',
        port: l.port,
        secure: l.mode === 'submissions',
        requireTLS: l.mode === 'submission',
        auth: { user: from, pass: PASSWORD },
        tls: { rejectUnauthorized: false },
      });
      const info = await t.sendMail({
        envelope: { from, to: ['friend@remote.example'] },
        raw: `From: ${from}\r\nTo: friend@remote.example\r\nSubject: via ${l.name}\r\n\r\nhello\r\n`,
      });
      expect(info.response).toMatch(/^250 2\.0\.0 Ok: queued as /);
      sent.push(info.response.split(' ').pop() ?? '');
    }
    const outbound = new Queue<OutboundJobData>(QUEUE_OUTBOUND, { connection: s.redis, prefix: s.prefix });
    const jobs = await outbound.getJobs(['waiting']);
    await outbound.close();
    expect(jobs.map((j) => j.data.msgid).sort()).toEqual(sent.sort());
    // [smtp] submission_max_per_hour reached the send-rate window: two of five taken.
    const [hour] = await s.redis.keys(`${s.prefix}:rl:wallet:${wallet}:submit-hour:*`);
    expect(await s.redis.get(hour ?? '')).toBe('2');
  });

  it('refuses to start a submission listener without TLS, naming the listener', async () => {
    const s = await operatorSetup(`
[[smtp.listeners]]
name = "plain587"
mode = "submission"
port = 2587
tls = "none"
`);
    await expect(
      startServe({
        config: s.config,
        logger: pino({ level: 'silent' }),
        components: { smtp: true, workers: false },
        // Every listener on a free port, so a running dev stack (8080, 1993, …) does not collide.
        apiListen: { host: '127.0.0.1', port: 0 },
        mailAccess: { imap: false, pop3: false },
        listenerOverrides: [{ host: '127.0.0.1', port: 0 }],
      }),
    ).rejects.toThrow(/smtp\.listeners "plain587": a submission listener needs TLS/);
  });
});
