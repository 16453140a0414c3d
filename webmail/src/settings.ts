// Connection settings, kept in localStorage. The API URL decides the mode
// at page load: absent = the account API on this page's own origin (server
// mode), blank = trustless (chain RPC, gateway and pin service only), a URL
// = that account API. A change takes effect on the next load.
import { DEFAULT_PROGRAM_ID } from '../../chain/client/program-id.ts';

export interface ConnectionSettings {
  rpcUrl: string;
  gatewayUrl: string;
  pinUrl: string;
  /** Bearer token for the pin service; '' = none. */
  pinToken: string;
  programId: string;
  /** undefined: same origin; '': trustless; otherwise the API base URL. */
  apiUrl?: string;
}

export type Mode = { kind: 'trustless' } | { kind: 'server'; apiUrl: string };

export const DEV_DEFAULTS: ConnectionSettings = {
  rpcUrl: 'http://127.0.0.1:8899',
  gatewayUrl: 'http://127.0.0.1:8183',
  pinUrl: 'http://127.0.0.1:8182',
  pinToken: '',
  programId: DEFAULT_PROGRAM_ID,
};

const KEY = 'sealpost.settings.v1';

/** Public values a Sealpost server offers its webmail (`config.json` beside the page). */
export interface ServerDefaults {
  rpc_url?: string;
  gateway_url?: string;
  pin_url?: string;
  program_id?: string;
}

export function storedSettings(storage: Storage): ConnectionSettings | null {
  const text = storage.getItem(KEY);
  if (!text) return null;
  try {
    const v = JSON.parse(text) as Partial<ConnectionSettings>;
    const s: ConnectionSettings = {
      rpcUrl: typeof v.rpcUrl === 'string' ? v.rpcUrl : DEV_DEFAULTS.rpcUrl,
      gatewayUrl: typeof v.gatewayUrl === 'string' ? v.gatewayUrl : DEV_DEFAULTS.gatewayUrl,
      pinUrl: typeof v.pinUrl === 'string' ? v.pinUrl : DEV_DEFAULTS.pinUrl,
      pinToken: typeof v.pinToken === 'string' ? v.pinToken : '',
      programId: typeof v.programId === 'string' ? v.programId : DEV_DEFAULTS.programId,
    };
    if (typeof v.apiUrl === 'string') s.apiUrl = v.apiUrl;
    return s;
  } catch {
    return null;
  }
}

export function saveSettings(storage: Storage, s: ConnectionSettings): void {
  storage.setItem(KEY, JSON.stringify(s));
}

export function withServerDefaults(d: ServerDefaults | null): ConnectionSettings {
  return {
    rpcUrl: d?.rpc_url ?? DEV_DEFAULTS.rpcUrl,
    gatewayUrl: d?.gateway_url ?? DEV_DEFAULTS.gatewayUrl,
    pinUrl: d?.pin_url ?? DEV_DEFAULTS.pinUrl,
    pinToken: '',
    programId: d?.program_id ?? DEV_DEFAULTS.programId,
  };
}

export function modeOf(s: ConnectionSettings, origin: string): Mode {
  if (s.apiUrl === undefined) return { kind: 'server', apiUrl: origin };
  const url = s.apiUrl.trim();
  if (url === '') return { kind: 'trustless' };
  return { kind: 'server', apiUrl: url.replace(/\/+$/, '') };
}

/** Checks a URL field; returns a message for the person, or null when fine. */
export function urlProblem(label: string, value: string): string | null {
  try {
    const u = new URL(value);
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      return `${label} must start with http:// or https://`;
    return null;
  } catch {
    return `${label} is not a URL (for example http://127.0.0.1:8899)`;
  }
}
