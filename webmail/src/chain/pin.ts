// Pinning is shared with the CLI (`sealpost mailbox send`).
export * from '../../../src/trustless/pin.ts';
