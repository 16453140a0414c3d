// punycode.js ships no types; only what chain/client/hash.ts uses.
declare module 'punycode.js' {
  const punycode: { toUnicode(domain: string): string; toASCII(domain: string): string };
  export default punycode;
}
