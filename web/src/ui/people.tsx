import { type FormEvent, useCallback, useState } from 'react';
import { ApiError, errorText } from '../lib/errors';
import './people.css';

/** A failed picture upload in words: what was wrong with the file, and what to do. */
export function pictureErrorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.code === 'too_large' || err.status === 413)
      return 'The picture is larger than 5 MB. Choose a smaller file.';
    if (err.code === 'unsupported_image')
      return 'This file is not a picture the help desk can use (or it is damaged). Choose a PNG, JPEG, GIF or WebP file.';
    if (err.code === 'image_too_large')
      return 'The picture is too big or too small: it must be 16 to 4,096 pixels a side and at most 16 megapixels.';
  }
  return errorText(err);
}

/** A multipart body with one part named `file` (the typed client sends FormData as it is). */
export function fileBody(file: File): { file: string } {
  const form = new FormData();
  form.append('file', file);
  return form as unknown as { file: string };
}

/** An action's state: busy while it runs, its failure, and a short "done" message after it. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const run = useCallback(async (fn: () => Promise<unknown>, e?: FormEvent) => {
    e?.preventDefault();
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const said = await fn();
      if (typeof said === 'string') setDone(said);
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, done, run, setError };
}

/** A short confirmation that something was saved (read out politely). */
export function Done({ text }: { text: string | null }) {
  return (
    <p className="done" role="status">
      {text ?? ''}
    </p>
  );
}
