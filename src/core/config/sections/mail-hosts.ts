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
  imap_enabled: bool().default(true).meta({ description: 'Offer IMAP.' }),
  imap_host: dnsName().optional().meta({ description: '', default: 'derived: `[smtp] hostname`' }),
  imap_port: port().optional().meta({ description: '', default: 'derived: 993 (implicit) / 143 (starttls)' }),
  imap_tls: oneOf(CLIENT_TLS).default('implicit').meta({ description: '`"implicit"` or `"starttls"`.' }),
  pop3_enabled: bool().default(true).meta({ description: 'Offer POP3.' }),
  pop3_host: dnsName().optional().meta({ description: '', default: 'derived: `[smtp] hostname`' }),
  pop3_port: port().optional().meta({ description: '', default: 'derived: 995 / 110' }),
  pop3_tls: oneOf(CLIENT_TLS).default('implicit').meta({ description: '`"implicit"` or `"starttls"`.' }),
  submission_enabled: bool().default(true).meta({ description: 'Offer submission.' }),
  smtp_host: dnsName()
    .optional()
    .meta({ description: 'Submission host.', default: 'derived: `[smtp] hostname`' }),
  submission_port: port().optional().meta({ description: '', default: 'derived: 465 / 587' }),
  submission_tls: oneOf(CLIENT_TLS)
    .default('implicit')
    .meta({ description: '`"implicit"` (465, the default) or `"starttls"` (587, opt-in).' }),
});

export type MailHostsInput = z.output<typeof mailHostsSchema>;
