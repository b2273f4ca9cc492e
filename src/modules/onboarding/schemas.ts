import { Type } from '@sinclair/typebox';

export const STEP_IDS = [
  'connect_mailbox',
  'invite_teammate',
  'upload_photo',
  'install_widget',
  'publish_article',
  'setup_triage',
  'create_label',
  'try_ollie',
] as const;
export type StepId = (typeof STEP_IDS)[number];

export const OnboardingStep = Type.Object({
  id: Type.Union(STEP_IDS.map((id) => Type.Literal(id))),
  title: Type.String(),
  description: Type.String(),
  done: Type.Boolean(),
  href: Type.String({ description: 'Where in the app the step is done (a path of the web app).' }),
  requires: Type.Union([Type.Literal('admin'), Type.Literal('agent')], {
    description: 'The lowest role that can do the step; steps above the caller’s role are not listed.',
  }),
});

export const Onboarding = Type.Object(
  {
    steps: Type.Array(OnboardingStep),
    done_count: Type.Integer({ minimum: 0 }),
    total: Type.Integer({ minimum: 0 }),
    dismissed: Type.Boolean({ description: 'The caller hid the checklist (POST /v1/onboarding/dismiss).' }),
  },
  { title: 'Onboarding' },
);
