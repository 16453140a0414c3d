// [imap]/[pop3] config, and what clients are told matching what runs: the
// autoconfig document rendered from [mail_hosts] names exactly the
// listeners `serve` started, and a client set up from it (host, port,
// socketType, %EMAILADDRESS%) logs in.
import { ImapFlow } from 'imapflow';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/core/config/index.ts';
import { renderAutoconfig } from '../../src/edge/domaind/client-config.ts';
import { mailUser, startMailRig } from '../support/imap-rig.ts';

describe('[imap] and [pop3] config', () => {
  it('has dev defaults, accepts production ports and names every bad key', () => {
    const c = parseConfig('');
    expect(c.imap).toMatchObject({
      host: '127.0.0.1',
      port: 1993,
      idle_poll_ms: 2000,
      idle_push: true,
      idle_push_poll_ms: 30_000,
      autologout_secs: 1800,
    });
    expect(c.imap.starttls_port).toBeUndefined();
    expect(c.pop3).toMatchObject({ host: '127.0.0.1', port: 1995, autologout_secs: 600 });
    const prod = parseConfig(
      '[imap]\nhost = "0.0.0.0"\nport = 993\nstarttls_port = 143\n[pop3]\nport = 995\nstarttls_port = 110\n' +
        '[mail_hosts]\nimap_tls = "starttls"\npop3_tls = "starttls"\n',
    );
    expect([prod.imap.port, prod.imap.starttls_port, prod.mail_hosts.imap_port]).toEqual([993, 143, 143]);
    expect([prod.pop3.port, prod.pop3.starttls_port, prod.mail_hosts.pop3_port]).toEqual([995, 110, 110]);

    let err: unknown;
    try {
      parseConfig(
        '[imap]\nidle_poll_ms = 5\nidle_push = "yes"\nidle_push_poll_ms = 50\nautologout_secs = 60\n[pop3]\nbogus = 1\n',
      );
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const text = (err as Error).message;
    expect(text).toMatch(/imap\.idle_poll_ms: expected integer 100-60000/);
    expect(text).toMatch(/imap\.idle_push: expected true or false/);
    expect(text).toMatch(/imap\.idle_push_poll_ms: expected integer 100-3600000/);
    expect(text).toMatch(/imap\.autologout_secs: expected integer >= 1800 \(RFC 3501\)/);
    expect(text).toMatch(/pop3\.bogus/);
    let second: unknown;
    try {
      parseConfig('[pop3]\nstarttls_port = 1995\n');
    } catch (e) {
      second = e;
    }
    expect((second as Error).message).toMatch(/pop3\.starttls_port: must differ from pop3\.port/);
  });

  it('serves what the autoconfig document offers, and nothing it leaves out', async () => {
    const rig = await startMailRig({ extraToml: '\n[mail_hosts]\npop3_enabled = false\n' });
    const user = await mailUser(rig);
    expect(rig.serving.mailAccessListeners?.map((l) => l.name)).toEqual(['imaps']);
    // The document as domaind renders it, with the public port the listener really has.
    const xml = renderAutoconfig('mail.test', {
      ...rig.config.mail_hosts,
      imap_port: rig.imapPort as number,
    });
    expect(xml).not.toMatch(/type="pop3"/);
    const incoming = /<incomingServer type="imap">([\s\S]*?)<\/incomingServer>/.exec(xml)?.[1] ?? '';
    const field = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(incoming)?.[1];
    expect(field('socketType')).toBe('SSL');
    expect(field('authentication')).toBe('password-cleartext');
    const client = new ImapFlow({
      // The rig's host name is not in DNS; the listener is on loopback.
      host: '127.0.0.1',
      port: Number(field('port')),
      secure: field('socketType') === 'SSL',
      tls: { rejectUnauthorized: false },
      auth: { user: (field('username') ?? '').replace('%EMAILADDRESS%', user.address), pass: user.password },
      logger: false,
    });
    await client.connect();
    expect(client.authenticated).toBeTruthy();
    await client.logout();
  }, 120_000);
});
