// Onboarding steps whose thing belongs to another module (the widget: a visitor seen; the
// knowledge base: a published article; the AI: an engine connected; the assistant: used). That
// module registers its check at start (deps.onboardingChecks); a step with none uses the
// built-in check of onboarding/service.ts.
import type { Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';

/** Whether a step's thing exists, for the module that owns it. */
export type StepCheck = (db: Kysely<DB>, workspaceId: string, userId: string) => Promise<boolean>;

export type PluggableStep = 'install_widget' | 'publish_article' | 'setup_triage' | 'try_ollie';

export type OnboardingChecks = Map<PluggableStep, StepCheck>;
