// One user action at a time with a progress line: while `run` works the
// controls are busy and `notice` shows the label; its result becomes the
// notice, a failure the error; `after` (e.g. re-reading state) runs on success.
import { useState } from 'preact/hooks';
import { useApp } from '../session.ts';

export function useAction(after: () => Promise<void>) {
  const app = useApp();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const run = async (label: string, fn: () => Promise<string>) => {
    setBusy(true);
    setError('');
    setNotice(label);
    try {
      setNotice(await fn());
      await after();
    } catch (err) {
      setNotice('');
      setError(app.errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, notice, run, setError };
}
