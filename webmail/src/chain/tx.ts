// Submitting and polling is shared with the CLI.
export * from '../../../src/trustless/tx.ts';
