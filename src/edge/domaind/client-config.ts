// Mail client self-configuration documents, rendered from [mail_hosts]:
//  - Thunderbird autoconfig (clientConfig version 1.1), GET
//    /mail/config-v1.1.xml and /.well-known/autoconfig/mail/config-v1.1.xml;
//  - Outlook autodiscover (POX request schema 2006, response schema 2006a),
//    POST /autodiscover/autodiscover.xml.
// Disabled protocols are left out; implicit TLS is `SSL`, STARTTLS is
// `STARTTLS` (Thunderbird) and `<Encryption>TLS</Encryption>` (Outlook).
import { XMLParser } from 'fast-xml-parser';
import type { ClientTls, MailHostsConfig } from '../../core/config/index.ts';

export const AUTODISCOVER_REQUEST_NS =
  'http://schemas.microsoft.com/exchange/autodiscover/outlook/requestschema/2006';
export const AUTODISCOVER_RESPONSE_NS =
  'http://schemas.microsoft.com/exchange/autodiscover/responseschema/2006';
export const OUTLOOK_RESPONSE_SCHEMA =
  'http://schemas.microsoft.com/exchange/autodiscover/outlook/responseschema/2006a';

export interface ClientEndpoint {
  protocol: 'imap' | 'pop3' | 'smtp';
  host: string;
  port: number;
  tls: ClientTls;
}

/** The enabled client endpoints in the order clients list them. */
export function clientEndpoints(h: MailHostsConfig): ClientEndpoint[] {
  const out: ClientEndpoint[] = [];
  if (h.imap_enabled) out.push({ protocol: 'imap', host: h.imap_host, port: h.imap_port, tls: h.imap_tls });
  if (h.pop3_enabled) out.push({ protocol: 'pop3', host: h.pop3_host, port: h.pop3_port, tls: h.pop3_tls });
  if (h.submission_enabled)
    out.push({ protocol: 'smtp', host: h.smtp_host, port: h.submission_port, tls: h.submission_tls });
  return out;
}

export function xmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Thunderbird's clientConfig 1.1 for one mail domain. */
export function renderAutoconfig(domain: string, hosts: MailHostsConfig): string {
  const d = xmlEscape(domain);
  const server = (e: ClientEndpoint) => {
    const tag = e.protocol === 'smtp' ? 'outgoingServer' : 'incomingServer';
    return [
      `    <${tag} type="${e.protocol}">`,
      `      <hostname>${xmlEscape(e.host)}</hostname>`,
      `      <port>${e.port}</port>`,
      `      <socketType>${e.tls === 'implicit' ? 'SSL' : 'STARTTLS'}</socketType>`,
      '      <authentication>password-cleartext</authentication>',
      '      <username>%EMAILADDRESS%</username>',
      `    </${tag}>`,
    ].join('\n');
  };
  const endpoints = clientEndpoints(hosts);
  // Thunderbird expects incoming servers before outgoing ones.
  const ordered = [
    ...endpoints.filter((e) => e.protocol !== 'smtp'),
    ...endpoints.filter((e) => e.protocol === 'smtp'),
  ];
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<clientConfig version="1.1">',
    `  <emailProvider id="${d}">`,
    `    <domain>${d}</domain>`,
    `    <displayName>${d} mail</displayName>`,
    `    <displayShortName>${d}</displayShortName>`,
    ...ordered.map(server),
    '  </emailProvider>',
    '</clientConfig>',
    '',
  ].join('\n');
}

export class AutodiscoverRequestError extends Error {
  constructor(
    readonly errorCode: 600 | 601,
    message: string,
  ) {
    super(message);
    this.name = 'AutodiscoverRequestError';
  }
}

export interface AutodiscoverRequest {
  emailAddress: string;
  domain: string;
}

const parser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: true,
  processEntities: true,
});

/** Parses Outlook's POX request; AutodiscoverRequestError 600 (invalid) or 601 (schema not offered). */
export function parseAutodiscoverRequest(body: string): AutodiscoverRequest {
  // No DTDs: they only serve entity expansion attacks in a request like this.
  if (/<!DOCTYPE|<!ENTITY/i.test(body))
    throw new AutodiscoverRequestError(600, 'DOCTYPE declarations are not accepted');
  let doc: unknown;
  try {
    doc = parser.parse(body, true);
  } catch (err) {
    throw new AutodiscoverRequestError(600, `the request is not well-formed XML: ${(err as Error).message}`);
  }
  const request = (doc as { Autodiscover?: { Request?: Record<string, unknown> } })?.Autodiscover?.Request;
  if (!request || typeof request !== 'object') {
    throw new AutodiscoverRequestError(600, 'expected <Autodiscover><Request>…</Request></Autodiscover>');
  }
  const schema = request.AcceptableResponseSchema;
  if (schema !== undefined && schema !== OUTLOOK_RESPONSE_SCHEMA) {
    throw new AutodiscoverRequestError(
      601,
      `only the response schema ${OUTLOOK_RESPONSE_SCHEMA} is offered, not ${String(schema)}`,
    );
  }
  const email = typeof request.EMailAddress === 'string' ? request.EMailAddress.trim() : '';
  const at = email.lastIndexOf('@');
  if (at < 1 || at === email.length - 1 || /\s/.test(email)) {
    throw new AutodiscoverRequestError(600, 'the request needs an <EMailAddress> of the form local@domain');
  }
  return { emailAddress: email, domain: email.slice(at + 1) };
}

/** The Outlook 2006a response with one Protocol per enabled endpoint. */
export function renderAutodiscover(emailAddress: string, hosts: MailHostsConfig): string {
  const login = xmlEscape(emailAddress);
  const protocol = (e: ClientEndpoint) =>
    [
      '      <Protocol>',
      `        <Type>${e.protocol === 'smtp' ? 'SMTP' : e.protocol.toUpperCase()}</Type>`,
      `        <Server>${xmlEscape(e.host)}</Server>`,
      `        <Port>${e.port}</Port>`,
      '        <DomainRequired>off</DomainRequired>',
      `        <LoginName>${login}</LoginName>`,
      '        <SPA>off</SPA>',
      '        <SSL>on</SSL>',
      ...(e.tls === 'starttls' ? ['        <Encryption>TLS</Encryption>'] : []),
      '        <AuthRequired>on</AuthRequired>',
      ...(e.protocol === 'smtp'
        ? ['        <UsePOPAuth>off</UsePOPAuth>', '        <SMTPLast>off</SMTPLast>']
        : []),
      '      </Protocol>',
    ].join('\n');
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    `<Autodiscover xmlns="${AUTODISCOVER_RESPONSE_NS}">`,
    `  <Response xmlns="${OUTLOOK_RESPONSE_SCHEMA}">`,
    '    <User>',
    `      <DisplayName>${login}</DisplayName>`,
    '    </User>',
    '    <Account>',
    '      <AccountType>email</AccountType>',
    '      <Action>settings</Action>',
    ...clientEndpoints(hosts).map(protocol),
    '    </Account>',
    '  </Response>',
    '</Autodiscover>',
    '',
  ].join('\n');
}

/** Autodiscover's error document (ErrorCode 500: unknown address, 600: invalid request, 601: schema not offered). */
export function renderAutodiscoverError(
  code: 500 | 600 | 601,
  message: string,
  now: Date = new Date(),
): string {
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    `<Autodiscover xmlns="${AUTODISCOVER_RESPONSE_NS}">`,
    '  <Response>',
    `    <Error Time="${now.toISOString().slice(11, 19)}" Id="0">`,
    `      <ErrorCode>${code}</ErrorCode>`,
    `      <Message>${xmlEscape(message)}</Message>`,
    '      <DebugData />',
    '    </Error>',
    '  </Response>',
    '</Autodiscover>',
    '',
  ].join('\n');
}
