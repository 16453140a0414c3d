// The recipient rules are shared with the CLI (`sealpost mailbox send`).
export * from '../../../src/mail/trustless/recipient.ts';
