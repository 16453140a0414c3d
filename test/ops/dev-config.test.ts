// The config `sealpost dev` generates: derived addresses from the dev host
// name (not `localhost`), client ports equal to its own listeners, older
// generated files repaired, and the addresses of a running stack written back.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfig, loadConfig, renderConfigToml } from '../../src/core/config/index.ts';
import {
  applyAddresses,
  DEV_DOMAIN,
  DEV_HOSTNAME,
  devConfigFile,
  ensureDevConfig,
  writeDevConfig,
} from '../../src/run/dev/dev-config.ts';
import { tempDir } from '../support/temp-dir.ts';

describe('the dev config', () => {
  it('derives every host name and address from the dev mail host and advertises its own ports', () => {
    const dataDir = tempDir();
    const { config, file } = ensureDevConfig(dataDir);
    expect(file).toBe(devConfigFile(dataDir));
    expect(config.smtp.hostname).toBe(DEV_HOSTNAME);
    expect(config.spooler.hostname).toBe(DEV_HOSTNAME);
    expect(config.spooler.tlsrpt.org_name).toBe(DEV_HOSTNAME);
    expect(config.spooler.tlsrpt.contact).toBe(`postmaster@${DEV_DOMAIN}`);
    expect(config.spooler.dmarc_rua_ingest.address).toBe(`postmaster@${DEV_DOMAIN}`);
    expect(config.domaind.mta_sts_mx).toEqual([DEV_HOSTNAME]);
    expect(config.domaind.public_host).toBe(DEV_HOSTNAME);
    // Mail clients are pointed at localhost: it resolves everywhere and the dev certificate names it.
    expect([config.mail_hosts.imap_host, config.mail_hosts.pop3_host, config.mail_hosts.smtp_host]).toEqual([
      'localhost',
      'localhost',
      'localhost',
    ]);
    expect(config.mail_hosts.imap_port).toBe(config.imap.port);
    expect(config.mail_hosts.pop3_port).toBe(config.pop3.port);
    const submissions = config.smtp.listeners.find((l) => l.tls === 'implicit');
    expect(config.mail_hosts.submission_port).toBe(submissions?.port);
    expect(readFileSync(file, 'utf8').replace(/^(imap|pop3|smtp)_host = "localhost"$/gm, '')).not.toMatch(
      /["@]localhost"/,
    );
    // Each data directory has queues of its own.
    expect(ensureDevConfig(tempDir()).config.redis.prefix).not.toBe(config.redis.prefix);
  });

  it('re-derives the localhost values an older generated config holds, and keeps edited ones', () => {
    const dataDir = tempDir();
    // What earlier versions wrote: the defaults resolved for `localhost`, then the dev host name set.
    const old = defaultConfig(dataDir);
    old.smtp.hostname = DEV_HOSTNAME;
    old.smtp.local_domains = [DEV_DOMAIN];
    old.spooler.tlsrpt.contact = 'tls-reports@example.org';
    writeFileSync(devConfigFile(dataDir), renderConfigToml(old));
    const { config, rederived } = ensureDevConfig(dataDir);
    expect(rederived).toContain('domaind.mta_sts_mx');
    expect(rederived).toContain('spooler.tlsrpt.org_name');
    expect(config.domaind.mta_sts_mx).toEqual([DEV_HOSTNAME]);
    expect(config.spooler.tlsrpt.org_name).toBe(DEV_HOSTNAME);
    expect(config.spooler.dmarc_rua_ingest.address).toBe(`postmaster@${DEV_DOMAIN}`);
    expect(config.spooler.tlsrpt.contact).toBe('tls-reports@example.org');
    expect(loadConfig(devConfigFile(dataDir)).mail_hosts.smtp_host).toBe('localhost');
  });

  it('points client hosts an older generated config derived from the dev host name at localhost', () => {
    const dataDir = tempDir();
    const old = ensureDevConfig(dataDir).config;
    old.mail_hosts.imap_host = DEV_HOSTNAME;
    old.mail_hosts.pop3_host = DEV_HOSTNAME;
    old.mail_hosts.smtp_host = 'smtp.example.org';
    writeFileSync(devConfigFile(dataDir), renderConfigToml(old));
    const { config, rederived } = ensureDevConfig(dataDir);
    expect(rederived).toEqual(['mail_hosts.imap_host', 'mail_hosts.pop3_host']);
    expect([config.mail_hosts.imap_host, config.mail_hosts.pop3_host, config.mail_hosts.smtp_host]).toEqual([
      'localhost',
      'localhost',
      'smtp.example.org',
    ]);
    expect(loadConfig(devConfigFile(dataDir)).mail_hosts.imap_host).toBe('localhost');
  });

  it('writes the addresses a running stack got into the file', () => {
    const dataDir = tempDir();
    const { config, file } = ensureDevConfig(dataDir);
    applyAddresses(config, {
      rpcUrl: 'http://127.0.0.1:41001',
      wsUrl: 'ws://127.0.0.1:41002',
      redisUrl: 'redis://127.0.0.1:6379/3',
      pinUrl: 'http://127.0.0.1:41003',
      gatewayUrl: 'http://127.0.0.1:41004',
      smtpPorts: [41005, 41006],
      apiUrl: 'http://127.0.0.1:41007',
      mailAccess: [
        { name: 'imaps', port: 41008 },
        { name: 'pop3s', port: 41009 },
      ],
      domaindUrl: 'http://127.0.0.1:41010',
    });
    expect(writeDevConfig(file, config)).toBe(true);
    expect(writeDevConfig(file, config)).toBe(false);
    const back = loadConfig(file);
    expect(back.chain.rpc_url).toBe('http://127.0.0.1:41001');
    expect(back.chain.ws_url).toBe('ws://127.0.0.1:41002');
    expect(back.redis.url).toBe('redis://127.0.0.1:6379/3');
    expect([back.pind.port, back.pind.gateway_port]).toEqual([41003, 41004]);
    expect(back.ipfs.gateway_url).toBe('http://127.0.0.1:41004');
    expect(back.smtp.listeners.map((l) => l.port)).toEqual([41005, 41006]);
    expect(back.api.port).toBe(41007);
    expect(back.api.public_url).toBe('http://127.0.0.1:41007');
    expect([back.imap.port, back.pop3.port, back.domaind.port]).toEqual([41008, 41009, 41010]);
    expect([back.mail_hosts.imap_port, back.mail_hosts.pop3_port, back.mail_hosts.submission_port]).toEqual([
      41008, 41009, 41006,
    ]);
    expect(join(dataDir, 'sealpost.toml')).toBe(file);
  });
});
