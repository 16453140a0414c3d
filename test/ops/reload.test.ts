// Reloading a running serve (src/run/serve/reload.ts) on the real stack: devnet,
// pind, Redis, the store, the MX with STARTTLS, submission on 465 and 587,
// IMAP and POP3 on loopback ports. A new certificate reaches new
// connections on every TLS listener while an IMAP session opened before the
// reload stays logged in and answers; a broken certificate (garbage PEM, a
// key of another pair) or a config that no longer parses changes nothing and
// is logged as an error; a rotated admin token takes effect at once; the
// reloadable limits apply to new connections, other changed keys are named
// as needing a restart; the submission listener's peer CA bundle reloads
// too. The CLI side (`sealpost reload` against a spawned serve) is in
// test/ops/reload-cli.test.ts.
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig } from '../../src/core/config/index.ts';
import { MetricsRegistry } from '../../src/core/limits/metrics.ts';
import { createSelfSignedCert } from '../../src/core/tls/self-signed.ts';
import { RELOADABLE_KEYS, type ReloadReport, ServeReloader } from '../../src/run/serve/reload.ts';
import { LineClient, mailUser } from '../support/imap-rig.ts';
import { type ServeRig, startServeRig } from '../support/serve-rig.ts';
import { converse, startSubmissionRig } from '../support/submission-rig.ts';
import { implicitTlsFingerprint, smtpStarttlsFingerprint } from '../support/tls-probe.ts';

const OLD_TOKEN = 'old-admin-token-0123456789abcdef';
const NEW_TOKEN = 'new-admin-token-fedcba9876543210';

/** Every log line the serve writes, parsed. */
function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

async function writePair(rig: ServeRig): Promise<string> {
  const pair = await createSelfSignedCert(['localhost', '127.0.0.1'], { days: 30 });
  writeFileSync(rig.config.smtp.tls_key_file, pair.key, { mode: 0o600 });
  writeFileSync(rig.config.smtp.tls_cert_file, pair.cert);
  return new X509Certificate(pair.cert).fingerprint256;
}

function editConfig(rig: ServeRig, edit: (text: string) => string): void {
  writeFileSync(rig.configFile, edit(readFileSync(rig.configFile, 'utf8')));
}

/** What `serve` runs at SIGHUP: the same config file read again, then the swap. */
function reload(rig: ServeRig): ReloadReport {
  return rig.serving.reload(() => loadConfig(rig.configFile, { dataDirOverride: rig.dataDir }));
}

async function adminStatus(rig: ServeRig, token: string): Promise<number> {
  const res = await fetch(`${rig.serving.apiUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status;
}

describe('reload of a running serve', () => {
  it('swaps certificates, token and limits without dropping an open IMAP session; bad input changes nothing', async () => {
    const { logger, lines } = capturingLogger();
    const loopback0 = { host: '127.0.0.1', port: 0 };
    const rig = await startServeRig({
      mailAccess: true,
      mxStarttls: true,
      adminToken: OLD_TOKEN,
      extraToml: `
[[smtp.listeners]]
mode = "submissions"
port = 2465

[[smtp.listeners]]
mode = "submission"
port = 2587
tls = "starttls"

[imap]
max_connections_per_ip = 20
`,
      serve: { logger, listenerOverrides: [loopback0, loopback0, loopback0] },
    });
    const bob = await mailUser(rig);
    const port = (mode: string) => rig.serving.listeners.find((l) => l.mode === mode)?.port as number;
    const pop3Port = rig.pop3Port as number;
    const imapPort = rig.imapPort as number;
    const fingerprints = async () => ({
      imap: await implicitTlsFingerprint(imapPort),
      pop3: await implicitTlsFingerprint(pop3Port),
      submissions: await implicitTlsFingerprint(port('submissions')),
      submission: await smtpStarttlsFingerprint(port('submission')),
      mx: await smtpStarttlsFingerprint(port('mx')),
    });
    const all = (fp: string) => ({ imap: fp, pop3: fp, submissions: fp, submission: fp, mx: fp });

    // An IMAP session over TLS, logged in with INBOX selected, before any reload.
    const session = await LineClient.open(imapPort);
    await session.until(/^\* OK/);
    expect(await session.command('a1', `LOGIN "${bob.address}" "${bob.password}"`)).toMatch(/^a1 OK/m);
    expect(await session.command('a2', 'SELECT INBOX')).toMatch(/^a2 OK/m);
    const sessionFp = session.socket.getPeerCertificate().fingerprint256;
    expect(await fingerprints()).toEqual(all(sessionFp));

    // A new pair, a new log level, the admin token rotated, IMAP capped at one per address.
    const newFp = await writePair(rig);
    expect(newFp).not.toBe(sessionFp);
    writeFileSync(rig.config.api.admin_token_file, `${NEW_TOKEN}\n`);
    editConfig(rig, (t) =>
      t
        .replace('level = "silent"', 'level = "info"')
        .replace('max_connections_per_ip = 20', 'max_connections_per_ip = 1'),
    );
    expect(await adminStatus(rig, OLD_TOKEN)).toBe(200);
    const ok = reload(rig);
    expect(ok.errors).toEqual([]);
    expect(ok.ok).toBe(true);
    expect(ok.certificate).toMatchObject({ changed: true, fingerprint256: newFp });
    expect(ok.admin_token).toBe('changed');
    expect(ok.applied).toEqual(['imap.max_connections_per_ip', 'log.level']);
    expect(ok.restart_needed).toEqual([]);

    // The open session: same TLS state, still logged in, still answering.
    expect(await session.command('a3', 'NOOP')).toMatch(/^a3 OK/m);
    expect(await session.command('a4', 'STATUS INBOX (MESSAGES)')).toMatch(/^a4 OK/m);
    expect(session.socket.getPeerCertificate().fingerprint256).toBe(sessionFp);
    // New connections: the new certificate everywhere. IMAP's reloaded cap of one is taken by the
    // open session, so a new IMAP connection is refused (after its handshake, which shows the new pair).
    const { imap: _busy, ...others } = all(newFp);
    const refused = await LineClient.open(imapPort);
    expect(await refused.until(/^\* BYE/)).toMatch(/Too many connections/);
    refused.close();
    expect(await implicitTlsFingerprint(imapPort)).toBe(newFp);
    expect({
      pop3: await implicitTlsFingerprint(pop3Port),
      submissions: await implicitTlsFingerprint(port('submissions')),
      submission: await smtpStarttlsFingerprint(port('submission')),
      mx: await smtpStarttlsFingerprint(port('mx')),
    }).toEqual(others);
    // The token: the old one refused, the new one taken.
    expect(await adminStatus(rig, OLD_TOKEN)).toBe(401);
    expect(await adminStatus(rig, NEW_TOKEN)).toBe(200);
    const reloaded = lines.find((l) => String(l.msg).startsWith('reloaded:'));
    expect(reloaded?.msg).toContain(`certificate changed`);
    expect(reloaded?.msg).toContain(newFp);
    expect(reloaded?.msg).toContain('admin token changed');
    expect(reloaded?.level).toBe(30);

    // Garbage PEM in the certificate file: nothing changes, the error names the file.
    editConfig(rig, (t) => t.replace('max_connections_per_ip = 1', 'max_connections_per_ip = 20'));
    writeFileSync(rig.config.smtp.tls_cert_file, 'this is not a certificate\n');
    const garbage = reload(rig);
    expect(garbage.ok).toBe(false);
    expect(garbage.errors).toEqual([
      `[smtp] tls_cert_file ${rig.config.smtp.tls_cert_file}: holds no PEM certificate ("-----BEGIN CERTIFICATE-----")`,
    ]);
    const failedLine = lines.findLast((l) => l.level === 50);
    expect(failedLine?.msg).toContain('reload failed (nothing was changed');
    expect(failedLine?.msg).toContain(rig.config.smtp.tls_cert_file);
    // The cap of one still holds (the failed reload applied no key), and the new pair is still served.
    const stillCapped = await LineClient.open(imapPort);
    expect(await stillCapped.until(/^\* BYE/)).toMatch(/Too many connections/);
    stillCapped.close();
    expect(await implicitTlsFingerprint(pop3Port)).toBe(newFp);
    expect(await smtpStarttlsFingerprint(port('mx'))).toBe(newFp);

    // A key of another pair: refused as not matching; the served certificate stays.
    const other = await createSelfSignedCert(['localhost'], { days: 30 });
    const third = await createSelfSignedCert(['localhost'], { days: 30 });
    writeFileSync(rig.config.smtp.tls_cert_file, third.cert);
    writeFileSync(rig.config.smtp.tls_key_file, other.key);
    const mismatch = reload(rig);
    expect(mismatch.ok).toBe(false);
    expect(mismatch.errors).toEqual([
      `[smtp] tls_key_file ${rig.config.smtp.tls_key_file}: does not match the certificate in ${rig.config.smtp.tls_cert_file} (smtp.tls_cert_file)`,
    ]);
    expect(await implicitTlsFingerprint(port('submissions'))).toBe(newFp);
    expect(await smtpStarttlsFingerprint(port('submission'))).toBe(newFp);

    // A config that no longer parses: nothing changes either.
    writeFileSync(rig.config.smtp.tls_key_file, third.key);
    const goodConfig = readFileSync(rig.configFile, 'utf8');
    writeFileSync(rig.configFile, `${goodConfig}\n[smtp\n`);
    const broken = reload(rig);
    expect(broken.ok).toBe(false);
    expect(broken.errors[0]).toMatch(/^config error in .*sealpost\.toml:\n.*TOML syntax error/);
    expect(await implicitTlsFingerprint(pop3Port)).toBe(newFp);

    // Fixed again: the third pair and the cap of 20 apply; a changed hostname needs a restart.
    writeFileSync(
      rig.configFile,
      goodConfig.replace('hostname = "mx.mail.test"', 'hostname = "mx2.mail.test"'),
    );
    const fixed = reload(rig);
    expect(fixed.ok).toBe(true);
    expect(fixed.certificate?.changed).toBe(true);
    expect(fixed.admin_token).toBe('unchanged');
    expect(fixed.applied).toEqual(['imap.max_connections_per_ip']);
    expect(fixed.restart_needed).toContain('smtp.hostname');
    const thirdFp = fixed.certificate?.fingerprint256 as string;
    expect(await fingerprints()).toEqual(all(thirdFp));
    expect(lines.some((l) => l.level === 40 && String(l.msg).includes('smtp.hostname'))).toBe(true);

    // And the session opened before the first reload is still there.
    expect(await session.command('a5', 'NOOP')).toMatch(/^a5 OK/m);
    expect(await session.command('a6', 'LOGOUT')).toMatch(/^a6 OK/m);
    session.close();

    // The reloads are counted for Prometheus.
    const metrics = await (
      await fetch(`${rig.serving.apiUrl}/metrics`, { headers: { authorization: `Bearer ${NEW_TOKEN}` } })
    ).text();
    expect(metrics).toMatch(/^sealpost_reload_total\{outcome="success"\} 2$/m);
    expect(metrics).toMatch(/^sealpost_reload_total\{outcome="failure"\} 3$/m);
    expect(metrics).toMatch(/^sealpost_config_last_reload_success_timestamp_seconds \d+$/m);
  }, 120_000);

  it('follows [log] level in the loggers made before the reload', async () => {
    const { logger, lines } = capturingLogger();
    const rig = await startServeRig({ serve: { logger } });
    // To "error": the reload's own info line (from a child logger made at start) is no longer written.
    editConfig(rig, (t) => t.replace('level = "silent"', 'level = "error"'));
    const quiet = reload(rig);
    expect(quiet.applied).toEqual(['log.level']);
    expect(lines.some((l) => String(l.msg).startsWith('reloaded:'))).toBe(false);
    // Back to "info": written again.
    editConfig(rig, (t) => t.replace('level = "error"', 'level = "info"'));
    expect(reload(rig).ok).toBe(true);
    expect(lines.filter((l) => String(l.msg).startsWith('reloaded:'))).toHaveLength(1);
  }, 60_000);

  it('names only real config keys as reloadable, each listed in docs/config.md "Reload"', () => {
    const config = parseConfig('[smtp]\npeer_ca_file = "/etc/sealpost/peers.pem"\n', {
      configDir: '/etc/sealpost',
      source: 'test',
    });
    const at = (key: string) =>
      key.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], config);
    for (const key of RELOADABLE_KEYS) expect(at(key), key).toBeDefined();
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'config.md'), 'utf8');
    const section = /## Reload[\s\S]*?\n## /.exec(doc)?.[0] ?? '';
    const rows = section.split('\n').filter((l) => l.startsWith('| `['));
    for (const key of RELOADABLE_KEYS) {
      const [table, name] = key.split('.') as [string, string];
      const wildcard = name.endsWith('_window_secs') ? '`*_window_secs`' : '`*_messages`';
      const listed = rows
        .filter((r) => r.includes(`[${table}]`))
        .some((r) => r.includes(`${name}\``) || (table === 'limits' && r.includes(wildcard)));
      expect(listed, key).toBe(true);
    }
  });

  it('reloads the peer CA of a submission listener that asks for client certificates', async () => {
    const r = await startSubmissionRig({ peers: true });
    const caFile = join(r.dir, 'peer-ca.pem');
    const toml = `[smtp]\ntls_cert_file = "${join(r.dir, 'cert.pem')}"\ntls_key_file = "${join(r.dir, 'key.pem')}"\npeer_ca_file = "${caFile}"\n`;
    const config = parseConfig(toml, { configDir: r.dir, source: 'test' });
    const reloader = new ServeReloader({
      config,
      logger: pino({ level: 'silent' }),
      metrics: new MetricsRegistry(),
    });
    reloader.addCertificateTarget({
      name: 'submissions',
      peers: r.server.peers,
      setCertificate: (pem) => r.server.setCertificate(pem),
    });
    reloader.noteStarted();
    const external = async (cert: typeof r.certs.peer) =>
      (await converse(r.port, ['EHLO mx.peer.example', 'AUTH EXTERNAL ='], { tls: true, cert }))[2];
    expect(await external(r.certs.peer)).toBe('235 Authentication successful');
    expect(await external(r.certs.stranger)).toBe('535 5.7.8 Authentication credentials invalid');

    // The bundle now holds the other CA: its client certificates are the trusted ones.
    writeFileSync(caFile, r.certs.strangerCa.cert);
    const swapped = reloader.reload(parseConfig(toml, { configDir: r.dir, source: 'test' }));
    expect(swapped.errors).toEqual([]);
    expect(swapped.certificate?.changed).toBe(false);
    expect(await external(r.certs.stranger)).toBe('235 Authentication successful');
    expect(await external(r.certs.peer)).toBe('535 5.7.8 Authentication credentials invalid');

    // A bundle without a certificate is refused; the one in use stays.
    writeFileSync(caFile, 'nothing here\n');
    const broken = reloader.reload(parseConfig(toml, { configDir: r.dir, source: 'test' }));
    expect(broken.errors).toEqual([
      `[smtp] peer_ca_file ${caFile}: holds no PEM certificate ("-----BEGIN CERTIFICATE-----")`,
    ]);
    expect(await external(r.certs.stranger)).toBe('235 Authentication successful');
  }, 60_000);
});
