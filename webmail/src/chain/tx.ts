// Submitting and polling is shared with the CLI.
export * from '../../../src/mail/trustless/tx.ts';
