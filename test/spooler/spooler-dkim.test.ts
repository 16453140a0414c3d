// DKIM signing (src/mail/dkim-sign.ts) checked by an independent verifier:
// Debian's dkimpy (python3-dkim, the code behind `dkimverify`), fetching
// the public key over DNS from the DNS double. Also what the spooler signs
// itself (DSNs) and that a signed message survives delivery byte for byte.
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dkimRecord, generateDkimKey } from '../../src/core/keys/dkim-key.ts';
import { createDkimSigner, DkimKeyError } from '../../src/mail/dkim-sign.ts';
import { type DnsDouble, startDnsDouble } from '../support/doubles/dns-server.ts';
import { startRemoteMx } from '../support/doubles/remote-mx.ts';
import { eventually, startSpoolerRig, testMessage } from '../support/spooler-rig.ts';
import { tempDir } from '../support/temp-dir.ts';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** Runs dkimpy on `message`; resolves with its exit code and output. */
function dkimverify(
  dns: { host: string; port: number },
  message: Buffer,
): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      '/usr/bin/python3',
      ['test/fixtures/spooler/dkimverify.py', dns.host, String(dns.port)],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out: out.trim() }));
    child.stdin.end(message);
  });
}

async function keyWithRecord(dir: string, dns: DnsDouble, domain: string, selector: string, pkcs1 = false) {
  const key = await generateDkimKey();
  const file = join(dir, `${selector}.${domain}.pem`);
  const pem = pkcs1
    ? generateKeyPairSync('rsa', { modulusLength: 2048 })
    : { privateKey: key.privateKeyPem, publicKeySpki: key.publicKeySpki };
  if ('publicKey' in pem) {
    writeFileSync(file, pem.privateKey.export({ type: 'pkcs1', format: 'pem' }));
    const spki = new Uint8Array(pem.publicKey.export({ type: 'spki', format: 'der' }));
    dns.set(`${selector}._domainkey.${domain}`, 'TXT', [dkimRecord(domain, selector, spki).strings]);
  } else {
    writeFileSync(file, key.privateKeyPem);
    dns.set(`${selector}._domainkey.${domain}`, 'TXT', [
      dkimRecord(domain, selector, key.publicKeySpki).strings,
    ]);
  }
  return { domain, selector, key_file: file };
}

async function dnsDouble(): Promise<DnsDouble> {
  const dns = await startDnsDouble();
  cleanup.push(() => dns.close());
  return dns;
}

describe('DKIM signing', () => {
  it('rsa-sha256 signatures from PKCS#8 and PKCS#1 keys verify with dkimpy; a changed body does not', async () => {
    const dir = tempDir();
    const dns = await dnsDouble();
    const pkcs8 = await keyWithRecord(dir, dns, 'example.test', 's2025');
    const pkcs1 = await keyWithRecord(dir, dns, 'other.test', 'old', true);
    const signer = createDkimSigner([pkcs8, pkcs1]);
    const raw = Buffer.from(testMessage('signed mail', 'ann@example.test'));
    const signed = await signer.sign(raw, 'example.test');
    expect(signed.toString()).toMatch(
      /^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=example\.test;/,
    );
    expect(signed.subarray(signed.length - raw.length).equals(raw)).toBe(true);
    expect(await dkimverify(dns, signed)).toEqual({ code: 0, out: 'signature ok' });

    const signed1 = await signer.sign(Buffer.from(testMessage('pkcs1', 'bo@other.test')), 'other.test');
    expect(signed1.toString()).toContain('s=old');
    expect(await dkimverify(dns, signed1)).toEqual({ code: 0, out: 'signature ok' });

    const tampered = Buffer.from(signed.toString().replace('.leading dot', '.leading dog'));
    expect((await dkimverify(dns, tampered)).code).toBe(1);
  });

  it('a subdomain sender is signed with the parent domain key; a domain without a key is left unsigned', async () => {
    const dir = tempDir();
    const dns = await dnsDouble();
    const signer = createDkimSigner([await keyWithRecord(dir, dns, 'example.test', 'sel')]);
    expect(signer.signingDomain('mail.example.test')).toBe('example.test');
    const signed = await signer.sign(
      Buffer.from(testMessage('sub', 'x@mail.example.test')),
      'mail.example.test',
    );
    expect(signed.toString()).toContain('d=example.test');
    expect(await dkimverify(dns, signed)).toEqual({ code: 0, out: 'signature ok' });
    const raw = Buffer.from(testMessage('none', 'x@unknown.test'));
    expect((await signer.sign(raw, 'unknown.test')).equals(raw)).toBe(true);
    expect(signer.signingDomain('unknown.test')).toBeNull();
  });

  it('refuses keys it cannot use, naming the file and the problem', () => {
    const dir = tempDir();
    const small = join(dir, 'small.pem');
    writeFileSync(
      small,
      generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
    );
    const ec = join(dir, 'ec.pem');
    writeFileSync(
      ec,
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
    );
    const junk = join(dir, 'junk.pem');
    writeFileSync(junk, 'not a key\n');
    const entry = (key_file: string) => [{ domain: 'example.test', selector: 's', key_file }];
    expect(() => createDkimSigner(entry(small))).toThrow(
      new DkimKeyError(small, 'is 1024-bit RSA; at least 2048 bits are required'),
    );
    expect(() => createDkimSigner(entry(ec))).toThrow(/is a ec key; rsa-sha256 needs RSA/);
    expect(() => createDkimSigner(entry(junk))).toThrow(/is not a PEM private key/);
    expect(() => createDkimSigner(entry(join(dir, 'missing.pem')))).toThrow(/cannot be read \(ENOENT\)/);
  });

  it('end to end: a signed submission arrives intact and verifies; the DSN the spooler sends is signed too', async () => {
    const dir = tempDir();
    const remote = await startRemoteMx({
      host: '127.0.0.80',
      rcpt: (a) => (a.startsWith('gone') ? { code: 550, message: '5.1.1 gone' } : null),
    });
    cleanup.push(() => remote.close());
    const senderMx = await startRemoteMx({ host: '127.0.0.81', port: remote.port });
    cleanup.push(() => senderMx.close());
    const rig = await startSpoolerRig({
      config: { smtp_port: remote.port },
      zone: {
        'remote.test': { MX: [{ preference: 1, exchange: 'mx.remote.test' }] },
        'mx.remote.test': { A: ['127.0.0.80'] },
        'sealpost.test': { MX: [{ preference: 1, exchange: 'mx.sealpost.test' }] },
        'mx.sealpost.test': { A: ['127.0.0.81'] },
      },
      start: false,
    });
    cleanup.push(() => rig.close());
    const entry = await keyWithRecord(dir, rig.dns, 'sealpost.test', 'mail');
    rig.config.dkim = [entry];
    await rig.restart();
    const signer = createDkimSigner([entry]);

    const signed = await signer.sign(Buffer.from(testMessage('e2e')), 'sealpost.test');
    const msgid = await rig.send({
      from: 'ann@sealpost.test',
      to: ['bob@remote.test', 'gone@remote.test'],
      raw: signed,
    });
    await rig.done(msgid, 'remote.test');
    expect(remote.accepted[0]?.raw.equals(signed)).toBe(true);
    expect(await dkimverify(rig.dns, remote.accepted[0]?.raw as Buffer)).toEqual({
      code: 0,
      out: 'signature ok',
    });

    const dsn = await eventually(() => senderMx.accepted[0]);
    expect(dsn.raw.toString()).toMatch(/^DKIM-Signature: .*d=sealpost\.test;/s);
    expect(dsn.raw.toString()).toContain('From: Mail Delivery System <MAILER-DAEMON@out.sealpost.test>');
    expect(await dkimverify(rig.dns, dsn.raw)).toEqual({ code: 0, out: 'signature ok' });
  });
});
