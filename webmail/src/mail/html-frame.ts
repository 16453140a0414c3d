// HTML mail goes into a sandboxed iframe (no scripts, no same-origin) after
// DOMPurify. Remote content is blocked twice until the reader asks for it
// for this message: remote URLs are moved out of src/background/poster and
// style url()s (so nothing is even requested, whatever the browser's
// speculative parser does), and the frame's own CSP blocks remote loads.
import DOMPurify from 'dompurify';

const REMOTE_URL = /^\s*(?:https?:)?\/\//i;
const REMOTE_CSS_URL = /url\(\s*['"]?\s*(?:https?:)?\/\/[^)]*\)/gi;
const URL_ATTRS = ['src', 'background', 'poster'];

let blockRemote = true;
let hooked = false;

function blockRemoteUrls(node: Node): void {
  if (!blockRemote || !(node instanceof Element)) return;
  for (const attr of URL_ATTRS) {
    const value = node.getAttribute(attr);
    if (value !== null && REMOTE_URL.test(value)) {
      node.setAttribute(`data-blocked-${attr}`, value);
      node.removeAttribute(attr);
    }
  }
  const style = node.getAttribute('style');
  if (style !== null && REMOTE_CSS_URL.test(style)) {
    REMOTE_CSS_URL.lastIndex = 0;
    node.setAttribute('style', style.replace(REMOTE_CSS_URL, 'none'));
  }
}

export function sanitizeHtml(html: string, allowRemote: boolean): string {
  // Registered on first use: DOMPurify has hooks only where a DOM exists.
  if (!hooked) {
    DOMPurify.addHook('afterSanitizeAttributes', blockRemoteUrls);
    hooked = true;
  }
  blockRemote = !allowRemote;
  try {
    return DOMPurify.sanitize(html, {
      WHOLE_DOCUMENT: false,
      FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'meta', 'link', 'base'],
      FORBID_ATTR: ['srcset', 'ping'],
    });
  } finally {
    blockRemote = true;
  }
}

/** Whether sanitized HTML (made with remote content allowed) asks for anything remote. */
export function hasRemoteContent(sanitized: string): boolean {
  return (
    /\b(?:src|background|poster)\s*=\s*["']?\s*(?:https?:)?\/\//i.test(sanitized) ||
    /url\(\s*["']?\s*(?:https?:)?\/\//i.test(sanitized)
  );
}

export function htmlFrameDocument(sanitized: string, allowRemote: boolean): string {
  const img = allowRemote
    ? 'img-src data: https: http:; media-src https: http:'
    : 'img-src data:; media-src data:';
  const csp = `default-src 'none'; ${img}; style-src 'unsafe-inline'; font-src data:`;
  return `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${csp}"><base target="_blank"><style>body{font-family:system-ui,sans-serif;margin:0;padding:8px;overflow-wrap:anywhere}img{max-width:100%;height:auto}</style></head><body>${sanitized}</body></html>`;
}
