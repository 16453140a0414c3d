// What the domain service hosts for mail clients and sending MTAs: the
// MTA-STS policy, Thunderbird autoconfig and Outlook autodiscover, parsed
// with an XML parser and checked field by field; HTTPS when configured; and
// the `sealpost domaind` command as a subprocess.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { Keypair } from '@solana/web3.js';
import { XMLParser } from 'fast-xml-parser';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, parseConfig } from '../../src/core/config/index.ts';
import { mtaStsPolicyId } from '../../src/edge/domaind/mta-sts.ts';
import { type RunningDomaind, startDomaind } from '../../src/edge/domaind/server.ts';
import { startDnsDouble } from '../support/doubles/dns-server.ts';
import { tempDir } from '../support/temp-dir.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

interface HttpResult {
  status: number;
  type: string;
  body: string;
}

function call(
  url: string,
  opts: { method?: string; host?: string; body?: string; contentType?: string; ca?: string } = {},
): Promise<HttpResult> {
  const u = new URL(url);
  const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      {
        host: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method: opts.method ?? 'GET',
        headers: {
          host: opts.host ?? u.host,
          ...(opts.contentType ? { 'content-type': opts.contentType } : {}),
        },
        ...(opts.ca ? { ca: opts.ca, servername: 'localhost' } : {}),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body }),
        );
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

const BASE_TOML =
  '[smtp]\nhostname = "mail.example.org"\nlocal_domains = ["example.org", "xn--bcher-kva.example"]\n' +
  '[chain]\nrpc_url = "http://127.0.0.1:9"\n';

async function serve(toml: string): Promise<{ d: RunningDomaind; config: Config }> {
  const config = parseConfig(toml);
  const d = await startDomaind({
    config,
    host: '127.0.0.1',
    port: 0,
    delegate: null,
    authority: null,
    logger: pino({ level: 'silent' }),
  });
  cleanups.push(() => d.close());
  return { d, config };
}

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  isArray: (n) => ['incomingServer', 'Protocol'].includes(n),
});

describe('MTA-STS policy', () => {
  it('serves the policy for mta-sts.<domain> as text/plain, and nothing for other hosts', async () => {
    const { d } = await serve(
      `${BASE_TOML}[domaind]\nmta_sts_mx = ["mail.example.org", "backup.example.org"]\n`,
    );
    const res = await call(`${d.url}/.well-known/mta-sts.txt`, { host: 'mta-sts.example.org' });
    expect(res.status).toBe(200);
    expect(res.type).toBe('text/plain; charset=utf-8');
    expect(res.body).toBe(
      'version: STSv1\r\nmode: testing\r\nmx: mail.example.org\r\nmx: backup.example.org\r\nmax_age: 604800\r\n',
    );
    const idn = await call(`${d.url}/.well-known/mta-sts.txt`, { host: 'MTA-STS.xn--bcher-kva.example:443' });
    expect(idn.body).toBe(res.body);
    for (const host of ['example.org', 'mta-sts.other.example', 'mta-sts.example.org.evil.example']) {
      const miss = await call(`${d.url}/.well-known/mta-sts.txt`, { host });
      expect(miss.status, host).toBe(404);
      expect(JSON.parse(miss.body)).toMatchObject({ error: 'unknown_domain' });
    }
  });

  it('derives a policy id that changes with the policy text', async () => {
    const a = await serve(BASE_TOML);
    const b = await serve(`${BASE_TOML}[domaind]\nmta_sts_mode = "enforce"\nmta_sts_max_age_secs = 86400\n`);
    const pa = (await call(`${a.d.url}/.well-known/mta-sts.txt`, { host: 'mta-sts.example.org' })).body;
    const pb = (await call(`${b.d.url}/.well-known/mta-sts.txt`, { host: 'mta-sts.example.org' })).body;
    expect(pa).toContain('mode: testing\r\n');
    expect(pb).toBe('version: STSv1\r\nmode: enforce\r\nmx: mail.example.org\r\nmax_age: 86400\r\n');
    expect(mtaStsPolicyId(pa)).toMatch(/^[0-9a-f]{16}$/);
    expect(mtaStsPolicyId(pa)).not.toBe(mtaStsPolicyId(pb));
  });
});

describe('autoconfig (Thunderbird clientConfig 1.1)', () => {
  it('renders the default implicit-TLS servers, found by Host or by address, on both paths', async () => {
    const { d } = await serve(BASE_TOML);
    for (const [path, host] of [
      ['/mail/config-v1.1.xml', 'autoconfig.example.org'],
      ['/.well-known/autoconfig/mail/config-v1.1.xml', 'example.org'],
      ['/mail/config-v1.1.xml?emailaddress=alice%40example.org', '127.0.0.1'],
    ] as const) {
      const res = await call(`${d.url}${path}`, { host });
      expect(res.status, path).toBe(200);
      expect(res.type).toBe('application/xml; charset=utf-8');
      const doc = xml.parse(res.body);
      expect(doc.clientConfig['@version']).toBe('1.1');
      const provider = doc.clientConfig.emailProvider;
      expect(provider['@id']).toBe('example.org');
      expect(provider.domain).toBe('example.org');
      expect(provider.displayName).toBe('example.org mail');
      expect(provider.displayShortName).toBe('example.org');
      expect(provider.incomingServer).toEqual([
        {
          '@type': 'imap',
          hostname: 'mail.example.org',
          port: '993',
          socketType: 'SSL',
          authentication: 'password-cleartext',
          username: '%EMAILADDRESS%',
        },
        {
          '@type': 'pop3',
          hostname: 'mail.example.org',
          port: '995',
          socketType: 'SSL',
          authentication: 'password-cleartext',
          username: '%EMAILADDRESS%',
        },
      ]);
      expect(provider.outgoingServer).toEqual({
        '@type': 'smtp',
        hostname: 'mail.example.org',
        port: '465',
        socketType: 'SSL',
        authentication: 'password-cleartext',
        username: '%EMAILADDRESS%',
      });
    }
    const idn = xml.parse(
      (await call(`${d.url}/mail/config-v1.1.xml?emailaddress=bob%40B%C3%BCcher.example`)).body,
    );
    expect(idn.clientConfig.emailProvider['@id']).toBe('xn--bcher-kva.example');
    expect((await call(`${d.url}/mail/config-v1.1.xml`, { host: 'autoconfig.other.example' })).status).toBe(
      404,
    );
  });

  it('renders STARTTLS when configured and leaves out disabled protocols', async () => {
    const { d } = await serve(
      `${BASE_TOML}[mail_hosts]\nimap_tls = "starttls"\nimap_host = "imap.example.org"\npop3_enabled = false\n` +
        'submission_tls = "starttls"\nsmtp_host = "smtp.example.org"\n',
    );
    const doc = xml.parse(
      (await call(`${d.url}/mail/config-v1.1.xml`, { host: 'autoconfig.example.org' })).body,
    );
    const provider = doc.clientConfig.emailProvider;
    expect(provider.incomingServer).toEqual([
      {
        '@type': 'imap',
        hostname: 'imap.example.org',
        port: '143',
        socketType: 'STARTTLS',
        authentication: 'password-cleartext',
        username: '%EMAILADDRESS%',
      },
    ]);
    expect(provider.outgoingServer).toMatchObject({
      hostname: 'smtp.example.org',
      port: '587',
      socketType: 'STARTTLS',
    });
  });
});

describe('autodiscover (Outlook POX 2006a)', () => {
  const request = (
    email: string,
    schema = 'http://schemas.microsoft.com/exchange/autodiscover/outlook/responseschema/2006a',
  ) =>
    `<?xml version="1.0" encoding="utf-8"?>
<Autodiscover xmlns="http://schemas.microsoft.com/exchange/autodiscover/outlook/requestschema/2006">
  <Request>
    <EMailAddress>${email}</EMailAddress>
    <AcceptableResponseSchema>${schema}</AcceptableResponseSchema>
  </Request>
</Autodiscover>`;

  it('answers with one Protocol per enabled service, SSL on, the address as login', async () => {
    const { d } = await serve(
      `${BASE_TOML}[mail_hosts]\npop3_enabled = false\nsubmission_tls = "starttls"\n`,
    );
    for (const path of ['/autodiscover/autodiscover.xml', '/Autodiscover/Autodiscover.xml']) {
      const res = await call(`${d.url}${path}`, {
        method: 'POST',
        host: 'autodiscover.example.org',
        contentType: 'text/xml',
        body: request('alice@Example.org'),
      });
      expect(res.status, path).toBe(200);
      expect(res.type).toBe('application/xml; charset=utf-8');
      const doc = xml.parse(res.body);
      expect(doc.Autodiscover['@xmlns']).toBe(
        'http://schemas.microsoft.com/exchange/autodiscover/responseschema/2006',
      );
      const response = doc.Autodiscover.Response;
      expect(response['@xmlns']).toBe(
        'http://schemas.microsoft.com/exchange/autodiscover/outlook/responseschema/2006a',
      );
      expect(response.User.DisplayName).toBe('alice@Example.org');
      expect(response.Account.AccountType).toBe('email');
      expect(response.Account.Action).toBe('settings');
      expect(response.Account.Protocol).toEqual([
        {
          Type: 'IMAP',
          Server: 'mail.example.org',
          Port: '993',
          DomainRequired: 'off',
          LoginName: 'alice@Example.org',
          SPA: 'off',
          SSL: 'on',
          AuthRequired: 'on',
        },
        {
          Type: 'SMTP',
          Server: 'mail.example.org',
          Port: '587',
          DomainRequired: 'off',
          LoginName: 'alice@Example.org',
          SPA: 'off',
          SSL: 'on',
          Encryption: 'TLS',
          AuthRequired: 'on',
          UsePOPAuth: 'off',
          SMTPLast: 'off',
        },
      ]);
    }
  });

  it('answers bad requests with the autodiscover error document', async () => {
    const { d } = await serve(BASE_TOML);
    const post = (body: string, contentType = 'text/xml') =>
      call(`${d.url}/autodiscover/autodiscover.xml`, { method: 'POST', contentType, body });
    const code = (r: HttpResult) => xml.parse(r.body).Autodiscover.Response.Error.ErrorCode;
    const cases: [HttpResult, number, string][] = [
      [await post('<Autodiscover><Request>'), 400, '600'],
      [await post(request('not-an-address')), 400, '600'],
      [
        await post(
          request(
            'a@example.org',
            'http://schemas.microsoft.com/exchange/autodiscover/mobilesync/responseschema/2006',
          ),
        ),
        400,
        '601',
      ],
      [await post('<!DOCTYPE x [<!ENTITY a "b">]><Autodiscover/>', 'application/xml'), 400, '600'],
      [await post(request('a@elsewhere.example')), 404, '500'],
    ];
    for (const [res, status, errorCode] of cases) {
      expect(res.status).toBe(status);
      expect(code(res)).toBe(errorCode);
    }
    expect((await post(request('a@example.org'), 'application/octet-stream')).status).toBe(415);
  });
});

describe('serving over HTTPS and as a command', () => {
  function certificate(dir: string): { cert: string; key: string } {
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '2',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    return { cert, key };
  }

  it('serves HTTPS when tls_cert_file and tls_key_file are set', async () => {
    const dir = tempDir();
    const { cert, key } = certificate(dir);
    const { d } = await serve(`${BASE_TOML}[domaind]\ntls_cert_file = "${cert}"\ntls_key_file = "${key}"\n`);
    expect(d.url).toMatch(/^https:\/\//);
    const res = await call(`${d.url}/.well-known/mta-sts.txt`, {
      host: 'mta-sts.example.org',
      ca: readFileSync(cert, 'utf8'),
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatch(/^version: STSv1\r\n/);
  });

  it('runs `sealpost domaind`: health, documents, and 503 on POST without a delegate', {
    timeout: 120_000,
  }, async () => {
    const authority = Keypair.generate().publicKey.toBase58();
    const dns = await startDnsDouble({ '_solana.authority.example.org': { TXT: [authority] } });
    cleanups.push(() => dns.close());
    const dir = tempDir();
    const file = join(dir, 'sealpost.toml');
    writeFileSync(file, `${BASE_TOML}[domaind]\nresolver = "${dns.address}"\n[log]\nlevel = "warn"\n`);
    const child: ChildProcess = spawn(
      process.execPath,
      ['bin/sealpost.js', 'domaind', '--config', file, '--listen', '127.0.0.1:0'],
      {
        cwd: new URL('../..', import.meta.url).pathname,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    cleanups.push(async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /URL\s+(http:\/\/\S+)/.exec(out);
        if (m?.[1]) resolve(m[1]);
      });
      child.once('exit', (code) => reject(new Error(`domaind exited with ${code} before listening`)));
    });
    expect(JSON.parse((await call(`${url}/health`)).body)).toEqual({ status: 'ok' });
    const ready = JSON.parse((await call(`${url}/ready`)).body);
    expect(ready.local_domains).toMatchObject({ status: 'unchecked', authority: null, delegate: null });
    expect((await call(`${url}/mail/config-v1.1.xml`, { host: 'autoconfig.example.org' })).status).toBe(200);
    const post = await call(`${url}/domain`, {
      method: 'POST',
      contentType: 'text/plain',
      body: 'example.org',
    });
    expect(post.status).toBe(503);
    expect(JSON.parse(post.body)).toMatchObject({
      error: 'delegate_not_configured',
      claim: { authority },
    });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
