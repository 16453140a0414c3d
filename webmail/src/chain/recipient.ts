// The recipient rules are shared with the CLI (`sealpost mailbox send`).
export * from '../../../src/trustless/recipient.ts';
