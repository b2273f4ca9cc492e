// The migrated databases of this run (made once by test/support/global-setup.ts), for the test files.
import { readFileSync } from 'node:fs';
import { inject } from 'vitest';

let embedded: Blob | undefined | null = null;

/**
 * The migrated embedded data directory, for createRuntime's `databaseTemplate` (undefined on
 * PostgreSQL, or when the run has no global setup): a new embedded database starts from it.
 */
export function embeddedTemplate(): Blob | undefined {
  if (embedded === null) {
    const file = inject('embeddedTemplate');
    embedded = file ? new Blob([readFileSync(file)]) : undefined;
  }
  return embedded;
}

/** The migrated PostgreSQL database that ownDatabase() copies (null: none, migrate a new one). */
export const postgresTemplate = (): string | null => inject('postgresTemplate') || null;
