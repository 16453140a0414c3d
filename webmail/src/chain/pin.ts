// Pinning is shared with the CLI (`sealpost mailbox send`).
export * from '../../../src/mail/trustless/pin.ts';
