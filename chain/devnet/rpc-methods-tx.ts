// Transaction RPC methods: sendTransaction, simulateTransaction,
// getSignatureStatuses, getTransaction, getSignaturesForAddress.
import bs58 from 'bs58';
import type { ProcessOutcome } from './bank.ts';
import { PACKET_DATA_SIZE } from './constants.ts';
import { computeUnitPrice } from './fees.ts';
import { type RpcContext, type RpcMethod, withContext } from './rpc-context.ts';
import { accountViewParam, encodeAccount } from './rpc-encode.ts';
import { invalidParams, RpcCode, RpcError, rpcInvalid } from './rpc-errors.ts';
import {
  atLeastConfirmed,
  checkMinContextSlot,
  commitmentParam,
  configParam,
  decodeBase64Strict,
  integer,
  optionalBool,
  optionalInteger,
  optionalString,
  param,
  pubkeyParam,
  signatureParam,
  stringParam,
} from './rpc-params.ts';
import {
  innerInstructionsJson,
  renderTransaction,
  returnDataJson,
  type TxEncoding,
  transactionVersion,
} from './rpc-tx-json.ts';
import {
  type DecodedTransaction,
  decodeTransaction,
  sanitizeTransaction,
  TransactionDecodeError,
  TransactionSanitizeError,
  transactionSignature,
} from './transaction.ts';
import { type TransactionErrorJson, transactionErrorMessage } from './tx-error.ts';

const TX_TYPE = 'solana_transaction::versioned::VersionedTransaction';
const MAX_SIGNATURE_STATUSES = 256;
const MAX_SIGNATURES_FOR_ADDRESS = 1000;

/** Decodes and sanitizes the wire transaction of sendTransaction / simulateTransaction. */
function transactionParam(params: unknown[], encodingRaw: unknown): DecodedTransaction {
  const text = stringParam(param(params, 0, 'transaction'), 'transaction');
  const encoding = encodingRaw ?? 'base58';
  let wire: Uint8Array | null;
  if (encoding === 'base58') {
    if (text.length > 1683)
      throw rpcInvalid(
        `base58 encoded ${TX_TYPE} too large: ${text.length} bytes (max: encoded/raw 1683/${PACKET_DATA_SIZE})`,
      );
    try {
      wire = bs58.decode(text);
    } catch {
      throw rpcInvalid('invalid base58 encoding: InvalidCharacter');
    }
  } else if (encoding === 'base64') {
    if (text.length > 1644)
      throw rpcInvalid(
        `base64 encoded ${TX_TYPE} too large: ${text.length} bytes (max: encoded/raw 1644/${PACKET_DATA_SIZE})`,
      );
    wire = decodeBase64Strict(text);
    if (!wire) throw rpcInvalid('invalid base64 encoding: InvalidByte');
  } else {
    throw rpcInvalid(`unsupported encoding: ${String(encoding)}. Supported encodings: base58, base64`);
  }
  let tx: DecodedTransaction;
  try {
    tx = decodeTransaction(wire);
  } catch (err) {
    if (err instanceof TransactionDecodeError)
      throw rpcInvalid(`failed to deserialize ${TX_TYPE}: ${err.message}`);
    if (err instanceof TransactionSanitizeError) throw rpcInvalid(`invalid transaction: ${err.message}`);
    throw err;
  }
  try {
    sanitizeTransaction(tx);
  } catch (err) {
    if (err instanceof TransactionSanitizeError) throw rpcInvalid(`invalid transaction: ${err.message}`);
    throw err;
  }
  return tx;
}

const signatureFailure = () =>
  new RpcError(RpcCode.SignatureVerificationFailure, 'Transaction signature verification failure');

function preflightFailure(outcome: ProcessOutcome): RpcError {
  return new RpcError(
    RpcCode.PreflightFailure,
    `Transaction simulation failed: ${transactionErrorMessage(outcome.err as TransactionErrorJson)}`,
    {
      accounts: null,
      err: outcome.err,
      innerInstructions: null,
      logs: outcome.execution?.logs ?? [],
      replacementBlockhash: null,
      returnData: returnDataJson(outcome.execution?.returnData ?? null),
      unitsConsumed: outcome.execution?.unitsConsumed ?? 0,
    },
  );
}

function sendTransaction(params: unknown[], { bank, logger, fidelity }: RpcContext): string {
  const config = configParam(params, 1);
  const tx = transactionParam(params, config.encoding);
  checkMinContextSlot(config, bank.slot);
  const skipPreflight = optionalBool(config, 'skipPreflight');
  if (fidelity?.drops(computeUnitPrice(tx))) {
    // Accepted, then lost on the way to the leader: preflight still answers as it would.
    if (!skipPreflight) {
      const outcome = bank.processTransaction(tx, { mode: 'simulate', verifySignatures: true });
      if (outcome.err === 'SignatureFailure') throw signatureFailure();
      if (outcome.err !== null) throw preflightFailure(outcome);
    }
    logger.debug({ signature: transactionSignature(tx) }, 'fidelity: dropped an accepted transaction');
    return transactionSignature(tx);
  }
  if (skipPreflight) {
    const outcome = bank.processTransaction(tx, { mode: 'commit', verifySignatures: true });
    // Devnet refuses a bad signature outright; a real node would silently drop it.
    if (outcome.err === 'SignatureFailure') throw signatureFailure();
    if (!outcome.landed) {
      // As on a real cluster, a transaction that cannot pay its fee is dropped, not reported.
      logger.info({ signature: outcome.signature, err: outcome.err }, 'dropped transaction (skipPreflight)');
    }
    return outcome.signature;
  }
  const outcome = bank.processTransaction(tx, { mode: 'preflight', verifySignatures: true });
  if (outcome.err === 'SignatureFailure') throw signatureFailure();
  if (outcome.err !== null) throw preflightFailure(outcome);
  return outcome.signature;
}

function simulateTransaction(params: unknown[], { bank }: RpcContext) {
  const config = configParam(params, 1);
  const sigVerify = optionalBool(config, 'sigVerify');
  const replace = optionalBool(config, 'replaceRecentBlockhash');
  if (sigVerify && replace) throw rpcInvalid('sigVerify may not be used with replaceRecentBlockhash');
  const tx = transactionParam(params, config.encoding);
  const slot = bank.slotAt(commitmentParam(config));
  checkMinContextSlot(config, slot);
  let addresses: string[] | null = null;
  let view = accountViewParam({ encoding: 'base64' });
  if (config.accounts !== undefined && config.accounts !== null) {
    const accounts = config.accounts as Record<string, unknown>;
    if (typeof accounts !== 'object' || !Array.isArray(accounts.addresses)) {
      throw invalidParams('accounts: expected {addresses, encoding}');
    }
    if (accounts.addresses.length > tx.accountKeys.length) {
      throw rpcInvalid(`Too many accounts provided; max ${tx.accountKeys.length}`);
    }
    addresses = accounts.addresses.map((a) => pubkeyParam(a));
    view = accountViewParam({ encoding: accounts.encoding ?? 'base64' }, 'base64');
    if (view.encoding !== 'base64') throw invalidParams('accounts.encoding: expected base64 or jsonParsed');
  }
  const outcome = bank.processTransaction(tx, {
    mode: 'simulate',
    verifySignatures: sigVerify,
    replaceRecentBlockhash: replace,
  });
  if (sigVerify && outcome.err === 'SignatureFailure') throw signatureFailure();
  const writes = outcome.execution?.writes;
  const accounts = addresses?.map((a) => {
    const state = writes?.has(a) ? writes.get(a) : bank.getAccount(a);
    return state ? encodeAccount(state, view) : null;
  });
  const latest = bank.latestBlockhash('processed');
  return withContext(slot, {
    err: outcome.err,
    logs: outcome.execution?.logs ?? [],
    accounts: accounts ?? null,
    unitsConsumed: outcome.execution?.unitsConsumed ?? 0,
    returnData: returnDataJson(outcome.execution?.returnData ?? null),
    innerInstructions: optionalBool(config, 'innerInstructions')
      ? innerInstructionsJson(outcome.execution?.innerInstructions ?? [])
      : null,
    replacementBlockhash: replace
      ? { blockhash: latest.blockhash, lastValidBlockHeight: latest.lastValidBlockHeight }
      : null,
  });
}

function getSignatureStatuses(params: unknown[], { bank, fidelity }: RpcContext) {
  const raw = param(params, 0, 'signatures');
  if (!Array.isArray(raw)) throw invalidParams('signatures: expected an array');
  if (raw.length > MAX_SIGNATURE_STATUSES) {
    throw rpcInvalid(`Too many inputs provided; max ${MAX_SIGNATURE_STATUSES}`);
  }
  const signatures = raw.map(signatureParam);
  const search = optionalBool(configParam(params, 1), 'searchTransactionHistory');
  return withContext(
    fidelity ? fidelity.statusContextSlot(bank.slot) : bank.slot,
    signatures.map((s) => {
      const status = bank.signatureStatus(s, search);
      if (!status || fidelity?.hides(s, status.slot)) return null;
      return { ...status, status: status.err === null ? { Ok: null } : { Err: status.err } };
    }),
  );
}

function getTransaction(params: unknown[], { bank, fidelity }: RpcContext) {
  const signature = signatureParam(param(params, 0, 'signature'));
  // The second parameter may be a bare encoding string (older clients).
  const second = params[1];
  const config = typeof second === 'string' ? { encoding: second } : configParam(params, 1);
  const encoding = (optionalString(config, 'encoding') ?? 'json') as TxEncoding;
  if (!['json', 'jsonParsed', 'base64', 'base58'].includes(encoding)) {
    throw invalidParams(`unsupported encoding ${encoding}`);
  }
  const commitment = atLeastConfirmed(config);
  const maxVersion = optionalInteger(config, 'maxSupportedTransactionVersion');
  const record = bank.getTransaction(signature);
  if (!record || record.slot > bank.slotAt(commitment)) return null;
  if (fidelity?.hides(signature, record.slot)) return null;
  const version = transactionVersion(record);
  if (version !== 'legacy' && (maxVersion === undefined || version > maxVersion)) {
    throw new RpcError(
      RpcCode.UnsupportedTransactionVersion,
      `Transaction version (${version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${version}`,
    );
  }
  return renderTransaction(record, encoding, maxVersion !== undefined);
}

function getSignaturesForAddress(params: unknown[], { bank, fidelity }: RpcContext) {
  const address = pubkeyParam(param(params, 0, 'address'), 'address');
  const config = configParam(params, 1);
  const limitRaw = config.limit;
  const limit =
    limitRaw === undefined || limitRaw === null
      ? MAX_SIGNATURES_FOR_ADDRESS
      : integer(limitRaw, 'limit', 1, MAX_SIGNATURES_FOR_ADDRESS);
  const before =
    config.before === undefined || config.before === null ? undefined : signatureParam(config.before);
  const until =
    config.until === undefined || config.until === null ? undefined : signatureParam(config.until);
  const maxSlot = bank.slotAt(atLeastConfirmed(config));
  checkMinContextSlot(config, maxSlot);
  let records = bank.signaturesForAddress(address, { limit, before, until, maxSlot });
  if (fidelity) records = records.filter((r) => !fidelity.hides(r.signature, r.slot));
  return records.map((r) => ({
    signature: r.signature,
    slot: r.slot,
    err: r.err,
    memo: null,
    blockTime: r.blockTime,
    confirmationStatus: bank.commitmentOf(r.slot),
  }));
}

export const txMethods: Record<string, RpcMethod> = {
  sendTransaction,
  simulateTransaction,
  getSignatureStatuses,
  getTransaction,
  getSignaturesForAddress,
};
