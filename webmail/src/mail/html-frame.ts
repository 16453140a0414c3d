// HTML mail goes into a sandboxed iframe (no scripts) after DOMPurify.
// Remote content is blocked twice until the reader asks for it for this
// message: remote URLs are moved out of src/background/poster, SVG
// <image>/<use>/<feImage> href and xlink:href, and style url()s (so nothing
// is even requested, whatever the browser's speculative parser does), and
// the frame's own CSP blocks remote loads. URLs that are neither absolute
// http(s) nor data: (relative ones, which would resolve against the
// webmail's own origin) are dropped always, and the frame's base URL points
// nowhere, so a mail never makes the page's own server a request.
import DOMPurify from 'dompurify';

const REMOTE_URL = /^\s*(?:https?:)?\/\//i;
const DATA_URL = /^\s*data:/i;
const CSS_URL = /url\(\s*(['"]?)([^)'"]*)\1\s*\)/gi;
const URL_ATTRS = ['src', 'background', 'poster'];
const XLINK = 'http://www.w3.org/1999/xlink';
/** SVG elements whose href loads a resource (an `<a>`'s href is a link, handled apart). */
const SVG_RESOURCE = new Set(['image', 'use', 'feimage']);

let blockRemote = true;
let blocked = 0;
let hooked = false;

/** What to do with a resource URL: keep it, hold it until remote content is allowed, or drop it. */
function verdict(value: string): 'keep' | 'remote' | 'drop' {
  if (DATA_URL.test(value) || value.trim().startsWith('cid:')) return 'keep';
  if (REMOTE_URL.test(value)) return blockRemote ? 'remote' : 'keep';
  return value.trim() === '' ? 'keep' : 'drop';
}

function hold(node: Element, attr: string, value: string, ns: string | null = null): void {
  const v = verdict(value);
  if (v === 'keep') return;
  if (v === 'remote') {
    blocked++;
    node.setAttribute(`data-blocked-${attr.replace(':', '-')}`, value);
  }
  if (ns) node.removeAttributeNS(ns, attr.split(':').pop() ?? attr);
  node.removeAttribute(attr);
}

function blockUrls(node: Node): void {
  if (!(node instanceof Element)) return;
  for (const attr of URL_ATTRS) {
    const value = node.getAttribute(attr);
    if (value !== null) hold(node, attr, value);
  }
  const tag = node.localName.toLowerCase();
  if (SVG_RESOURCE.has(tag)) {
    const href = node.getAttribute('href');
    if (href !== null) hold(node, 'href', href);
    const xlink = node.getAttributeNS(XLINK, 'href');
    if (xlink !== null) hold(node, 'xlink:href', xlink, XLINK);
  } else {
    // A link: a relative one would open the webmail's own origin; links open in a new tab, no opener.
    const href = node.getAttribute('href');
    if (href !== null && !/^\s*(?:https?:|mailto:|#)/i.test(href)) node.removeAttribute('href');
    const xlink = node.getAttributeNS(XLINK, 'href');
    if (xlink !== null && !/^\s*(?:https?:|mailto:|#)/i.test(xlink)) node.removeAttributeNS(XLINK, 'href');
    if (tag === 'a' && node.hasAttribute('href')) node.setAttribute('rel', 'noopener noreferrer');
  }
  const style = node.getAttribute('style');
  if (style !== null && /url\(/i.test(style)) {
    node.setAttribute(
      'style',
      style.replace(CSS_URL, (whole, _q: string, url: string) => {
        const v = verdict(url);
        if (v === 'keep') return whole;
        if (v === 'remote') blocked++;
        return 'none';
      }),
    );
  }
}

export interface SanitizedMail {
  html: string;
  /** How many remote references were held back (0 when remote content is allowed). */
  blockedRemote: number;
}

export function sanitizeMail(html: string, allowRemote: boolean): SanitizedMail {
  // Registered on first use: DOMPurify has hooks only where a DOM exists.
  if (!hooked) {
    DOMPurify.addHook('afterSanitizeAttributes', blockUrls);
    hooked = true;
  }
  blockRemote = !allowRemote;
  blocked = 0;
  try {
    const out = DOMPurify.sanitize(html, {
      WHOLE_DOCUMENT: false,
      FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'meta', 'link', 'base'],
      FORBID_ATTR: ['srcset', 'ping', 'imagesrcset'],
    });
    return { html: out, blockedRemote: blocked };
  } finally {
    blockRemote = true;
    blocked = 0;
  }
}

export function sanitizeHtml(html: string, allowRemote: boolean): string {
  return sanitizeMail(html, allowRemote).html;
}

/** Whether the mail asks for anything remote (what "Load remote content" would load). */
export function hasRemoteContent(html: string): boolean {
  return sanitizeMail(html, false).blockedRemote > 0;
}

/** The frame's tallest size before it scrolls inside; the CSS minimum is a few lines. */
export const FRAME_MAX_HEIGHT = 2400;

export function htmlFrameDocument(sanitized: string, allowRemote: boolean): string {
  const img = allowRemote
    ? 'img-src data: https: http:; media-src https: http:'
    : 'img-src data:; media-src data:';
  const csp = `default-src 'none'; ${img}; style-src 'unsafe-inline'; font-src data:`;
  // The base URL points nowhere: a relative URL the sanitizer missed resolves to nothing.
  return `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${csp}"><base href="about:blank" target="_blank"><style>html,body{margin:0}body{font-family:system-ui,sans-serif;padding:8px;overflow-wrap:anywhere}img{max-width:100%;height:auto}</style></head><body>${sanitized}</body></html>`;
}
