// [mail_hosts]: what mail clients are told (autoconfig, autodiscover, SRV
// records). These are public names and ports, not bind addresses.
import * as z from 'zod';
import { bool, dnsName, oneOf, port } from '../fields.ts';

const CLIENT_TLS = ['implicit', 'starttls'] as const;
export type ClientTls = (typeof CLIENT_TLS)[number];

/** Standard ports per protocol and TLS mode (RFC 8314 implicit TLS preferred). */
export const CLIENT_PORTS = {
  imap: { implicit: 993, starttls: 143 },
  pop3: { implicit: 995, starttls: 110 },
  submission: { implicit: 465, starttls: 587 },
} as const;

export const mailHostsSchema = z.strictObject({
  imap_enabled: bool().default(true),
  imap_host: dnsName().optional(),
  imap_port: port().optional(),
  imap_tls: oneOf(CLIENT_TLS).default('implicit'),
  pop3_enabled: bool().default(true),
  pop3_host: dnsName().optional(),
  pop3_port: port().optional(),
  pop3_tls: oneOf(CLIENT_TLS).default('implicit'),
  submission_enabled: bool().default(true),
  smtp_host: dnsName().optional(),
  submission_port: port().optional(),
  submission_tls: oneOf(CLIENT_TLS).default('implicit'),
});

export type MailHostsInput = z.output<typeof mailHostsSchema>;
