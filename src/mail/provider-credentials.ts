// The recipient's pin provider as the pipeline reads it: the store keeps the
// kind in the clear and the JSON object sealed under the credential key with
// associated data binding it to this purpose and wallet.
import { type PinProviderConfig, parsePinProvider } from '../contracts/pin-provider.ts';
import { credentialAad, openCredential, sealCredential } from '../core/crypto/credential-seal.ts';

export const PIN_PROVIDER_PURPOSE = 'pin-provider';

export function sealPinProvider(key: Uint8Array, wallet: string, provider: PinProviderConfig): string {
  return sealCredential(key, JSON.stringify(provider), credentialAad(PIN_PROVIDER_PURPOSE, wallet));
}

export function openPinProvider(key: Uint8Array, wallet: string, sealed: string): PinProviderConfig {
  const json = openCredential(key, sealed, credentialAad(PIN_PROVIDER_PURPOSE, wallet));
  const parsed = parsePinProvider(JSON.parse(json));
  if (!parsed.ok) throw new Error(`stored pin provider of ${wallet} is invalid: ${parsed.message}`);
  return parsed.value;
}
