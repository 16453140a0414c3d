// The readers' Forward and Forward as attachment (chain and server mode
// alike): a prefilled compose from the opened message, or, when its body
// never opened, the reader's error saying nothing was sent or spent.

import { forwardDraft } from '../mail/forward.ts';
import type { LoadedMessage } from '../messages.ts';
import { useApp } from '../session.ts';

/** Forward pressed on a message whose body never opened. */
export const FORWARD_UNAVAILABLE =
  'This message could not be fetched or opened, so there is nothing to forward. Nothing was sent or spent.';

export function ForwardButtons({
  loaded,
  onError,
}: {
  loaded: LoadedMessage | null;
  /** Shows a reader error (the body is unavailable). */
  onError: (text: string) => void;
}) {
  const app = useApp();
  const forward = (asAttachment: boolean) => {
    if (!loaded) {
      onError(FORWARD_UNAVAILABLE);
      return;
    }
    app.navigate({ name: 'compose', draft: forwardDraft(loaded, asAttachment) });
  };
  return (
    <>
      <button type="button" data-shortcut="f" onClick={() => forward(false)}>
        Forward
      </button>
      <button type="button" onClick={() => forward(true)}>
        Forward as attachment
      </button>
    </>
  );
}
