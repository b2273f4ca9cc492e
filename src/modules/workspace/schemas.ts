import { Type } from '@sinclair/typebox';
import { Body, Nullable, Timestamp } from '../../platform/http/schemas.js';

const LabelCreation = Type.Union([Type.Literal('all'), Type.Literal('admins')]);
const AutoAssign = Type.Union([Type.Literal('none'), Type.Literal('round_robin'), Type.Literal('load_balanced')]);

/** Every settings key with its type; PATCH takes any subset (partial merge). */
const settingsProps = {
  brand_color: Type.String({ pattern: '^#[0-9a-fA-F]{6}$' }),
  timezone: Type.String({ minLength: 1, maxLength: 64 }),
  help_center_enabled: Type.Boolean(),
  help_center_title: Type.String({ minLength: 1, maxLength: 100 }),
  csat_enabled: Type.Boolean(),
  auto_assign: AutoAssign,
  gravatar: Type.Boolean(),
  domain_logos: Type.Boolean(),
  label_creation: LabelCreation,
  auto_close_days: Type.Integer({ minimum: 0, maximum: 365 }),
  ai: Type.Object({ assistant: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
};

/** As returned: a new workspace's help_center_title is empty (PATCH may not set it empty). */
export const WorkspaceSettings = Type.Object({
  ...settingsProps,
  help_center_title: Type.String({ maxLength: 100, description: 'Empty until an admin sets one.' }),
});
export const WorkspaceSettingsPatch = Type.Partial(Type.Object(settingsProps, { additionalProperties: false }), {
  additionalProperties: false,
});

export const Images = Type.Object({
  help_center_logo: Nullable(Type.String()),
  help_center_favicon: Nullable(Type.String()),
  widget_avatar: Nullable(Type.String()),
  widget_launcher: Nullable(Type.String()),
});

export const Workspace = Type.Object({
  id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  widget_key: Type.String(),
  settings: WorkspaceSettings,
  avatar_url: Nullable(Type.String()),
  avatar_source: Nullable(Type.String()),
  images: Images,
  created_at: Timestamp,
});

export const SLUG_PATTERN = '^[a-z0-9](?:[a-z0-9-]{0,48}[a-z0-9])?$';

export const CreateWorkspaceBody = Body({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  slug: Type.Optional(Type.String({ pattern: SLUG_PATTERN, maxLength: 50 })),
});

export const PatchWorkspaceBody = Body({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  settings: Type.Optional(WorkspaceSettingsPatch),
});

export const DeleteWorkspaceBody = Body({ confirm_name: Type.String({ minLength: 1, maxLength: 100 }) });

export const WidgetSecret = Type.Object({ widget_secret: Type.String() });

export const TransferBody = Body({
  user_id: Type.String({ format: 'uuid' }),
  code: Type.String({ minLength: 6, maxLength: 32, description: 'A current TOTP code or an unused recovery code.' }),
});
