// Account data as the RPC shows it (UiAccount): `[data, encoding]` pairs,
// lamports, owner, executable, rentEpoch, space. jsonParsed falls back to
// base64 as a real node does for programs it has no parser for.
import bs58 from 'bs58';
import type { AccountState } from './account-store.ts';
import { U64_MAX } from './constants.ts';
import { invalidParams, rpcInvalid } from './rpc-errors.ts';
import { type Config, integer } from './rpc-params.ts';

export type AccountEncoding = 'binary' | 'base58' | 'base64' | 'jsonParsed';

export interface DataSlice {
  offset: number;
  length: number;
}

export interface UiAccount {
  data: string | [string, string];
  executable: boolean;
  lamports: bigint;
  owner: string;
  rentEpoch: bigint;
  space: number;
}

export interface AccountView {
  encoding: AccountEncoding;
  dataSlice?: DataSlice;
}

export function accountViewParam(config: Config, defaultEncoding: AccountEncoding = 'binary'): AccountView {
  const raw = config.encoding ?? defaultEncoding;
  if (raw !== 'binary' && raw !== 'base58' && raw !== 'base64' && raw !== 'jsonParsed') {
    throw invalidParams(
      `unsupported encoding ${JSON.stringify(raw)} (devnet serves base64, base58, jsonParsed)`,
    );
  }
  const view: AccountView = { encoding: raw };
  const slice = config.dataSlice;
  if (slice !== undefined && slice !== null) {
    if (typeof slice !== 'object' || Array.isArray(slice))
      throw invalidParams('dataSlice: expected {offset, length}');
    const s = slice as Config;
    view.dataSlice = {
      offset: integer(s.offset, 'dataSlice.offset'),
      length: integer(s.length, 'dataSlice.length'),
    };
  }
  if (view.dataSlice && raw === 'jsonParsed') view.encoding = 'base64';
  return view;
}

export function encodeAccount(state: AccountState, view: AccountView): UiAccount {
  let data = state.data;
  if (view.dataSlice)
    data = data.subarray(view.dataSlice.offset, view.dataSlice.offset + view.dataSlice.length);
  let encoded: UiAccount['data'];
  switch (view.encoding) {
    case 'binary':
    case 'base58':
      if (data.length > 128) {
        throw rpcInvalid(
          'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.',
        );
      }
      encoded = view.encoding === 'binary' ? bs58.encode(data) : [bs58.encode(data), 'base58'];
      break;
    default:
      encoded = [Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64'), 'base64'];
  }
  return {
    data: encoded,
    executable: state.executable,
    lamports: state.lamports,
    owner: state.owner,
    rentEpoch: U64_MAX,
    space: state.data.length,
  };
}
