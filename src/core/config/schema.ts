// The root schema: one strict table per section. Every section may be absent
// (`prefault({})` parses the empty table so its defaults apply).
import * as z from 'zod';
import { apiSchema } from './sections/api.ts';
import { chainSchema } from './sections/chain.ts';
import { domaindSchema } from './sections/domaind.ts';
import { ipfsSchema } from './sections/ipfs.ts';
import { limitsSchema } from './sections/limits.ts';
import { imapSchema, pop3Schema } from './sections/mail-access.ts';
import { mailHostsSchema } from './sections/mail-hosts.ts';
import { pindSchema } from './sections/pind.ts';
import {
  blobsSchema,
  dnsSchema,
  logSchema,
  redisSchema,
  serveSchema,
  storeSchema,
  tlsSchema,
} from './sections/runtime.ts';
import { smtpSchema } from './sections/smtp.ts';
import { spamSchema } from './sections/spam.ts';
import { spoolerSchema } from './sections/spooler.ts';

const section = <T extends z.ZodType>(schema: T) => schema.prefault({} as z.input<T>);

export const configSchema = z.strictObject({
  smtp: section(smtpSchema),
  spooler: section(spoolerSchema),
  mail_hosts: section(mailHostsSchema),
  imap: section(imapSchema),
  pop3: section(pop3Schema),
  chain: section(chainSchema),
  ipfs: section(ipfsSchema),
  api: section(apiSchema),
  domaind: section(domaindSchema),
  pind: section(pindSchema),
  serve: section(serveSchema),
  store: section(storeSchema),
  blobs: section(blobsSchema),
  redis: section(redisSchema),
  log: section(logSchema),
  dns: section(dnsSchema),
  tls: section(tlsSchema),
  limits: section(limitsSchema),
  spam: section(spamSchema),
});

export type ConfigInput = z.output<typeof configSchema>;

/** Section names in the order docs and generated files list them. */
export const SECTION_ORDER = Object.keys(configSchema.shape) as (keyof ConfigInput)[];
