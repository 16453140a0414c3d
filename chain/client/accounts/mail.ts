// Accounts 1–7 of docs/protocol.md: the ones the program writes in this version.
// Keys are web3.js PublicKeys, hashes Uint8Arrays, u64/i64 bigints.
import { ACCOUNTS } from '../../protocol/schema.ts';
import type { AccountData } from '../../protocol/types.ts';
import { schemaLayout } from './layout.ts';

export type Mailbox = AccountData<'Mailbox'>;

export const mailboxLayout = schemaLayout<Mailbox>('Mailbox', ACCOUNTS.Mailbox);

export type MailboxKey = AccountData<'MailboxKey'>;

export const mailboxKeyLayout = schemaLayout<MailboxKey>('MailboxKey', ACCOUNTS.MailboxKey);

export type Email = AccountData<'Email'>;

export const emailLayout = schemaLayout<Email>('Email', ACCOUNTS.Email);

export type Frombox = AccountData<'Frombox'>;

export const fromboxLayout = schemaLayout<Frombox>('Frombox', ACCOUNTS.Frombox);

export type Alias = AccountData<'Alias'>;

export const aliasLayout = schemaLayout<Alias>('Alias', ACCOUNTS.Alias);

export type MailDomain = AccountData<'MailDomain'>;

export const mailDomainLayout = schemaLayout<MailDomain>('MailDomain', ACCOUNTS.MailDomain);

export type Postoffice = AccountData<'Postoffice'>;

export const postofficeLayout = schemaLayout<Postoffice>('Postoffice', ACCOUNTS.Postoffice);
