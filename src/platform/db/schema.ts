// Row types of every table, for Kysely: the DB map below, the tables in tables-*.ts (written by
// hand; test/platform/db/schema.test.ts compares them with the migrated database column by column).

import type { AiSettingsTable, AiUsageTable } from './tables-ai.js';
import type {
  AssistantActionsTable,
  AssistantSessionsTable,
  AssistantStepsTable,
  AssistantTurnsTable,
} from './tables-assistant.js';
import type { AiLedgerTable, AiReservationsTable, BillingAccountsTable } from './tables-billing.js';
import type {
  EmailAutoRepliesTable,
  InboundEmailsTable,
  MailboxAddressesTable,
  MailboxesTable,
  MailOutboxTable,
  WebhookDeliveriesTable,
  WebhookEndpointsTable,
} from './tables-channels.js';
import type { EmbeddingQueueTable, EmbeddingsTable } from './tables-embeddings.js';
import type {
  ApiKeysTable,
  AppAttestChallengesTable,
  AppAttestKeysTable,
  AuditLogsTable,
  EventsTable,
  IdempotencyKeysTable,
  InvitationsTable,
  MembersTable,
  MfaRecoveryCodesTable,
  OAuthExchangeCodesTable,
  OAuthIdentitiesTable,
  OAuthSignInFlowsTable,
  SessionRetiredTokensTable,
  SessionsTable,
  TeamMembersTable,
  TeamsTable,
  UsersTable,
  WorkspaceCountersTable,
  WorkspacesTable,
} from './tables-identity.js';
import type { ImagesTable } from './tables-images.js';
import type { KbArticleSlugsTable, KbArticlesTable, KbArticleViewsTable, KbCollectionsTable } from './tables-kb.js';
import type { PasskeyChallengesTable, PasskeysTable } from './tables-passkeys.js';
import type { PortalLimitMarksTable, PortalSessionsTable, PortalSignInLinksTable } from './tables-portal.js';
import type {
  AttachmentsTable,
  CompaniesTable,
  CompanyTagsTable,
  ContactsTable,
  ContactTagsTable,
  CustomFieldsTable,
  MessagesTable,
  NotificationsTable,
  SavedRepliesTable,
  TagGroupsTable,
  TagsTable,
  TicketActivitiesTable,
  TicketFieldSortKeysTable,
  TicketsTable,
  TicketTagsTable,
  ViewsTable,
} from './tables-records.js';
import type { StripeEventsTable, StripePaymentsTable, StripeRechargesTable } from './tables-stripe.js';
import type { TriageModelsTable } from './tables-triage-models.js';
import type { WidgetCapNoticesTable, WidgetSettingsTable, WidgetVisitorsTable } from './tables-widget.js';
import type {
  AssignmentPointersTable,
  AssignmentRulesTable,
  AssignmentSettingsTable,
  AutomationRunCountsTable,
  AutomationsTable,
  BusinessHoursTable,
  OnboardingDismissalsTable,
  SlaPoliciesTable,
  TriageSettingsTable,
} from './tables-workflow.js';

export type * from './columns.js';
export type * from './tables-channels.js';
export type * from './tables-embeddings.js';
export type * from './tables-identity.js';
export type * from './tables-images.js';
export type * from './tables-kb.js';
export type * from './tables-portal.js';
export type * from './tables-records.js';
export type * from './tables-stripe.js';
export type * from './tables-triage-models.js';
export type * from './tables-widget.js';
export type * from './tables-workflow.js';

export interface DB {
  users: UsersTable;
  oauth_identities: OAuthIdentitiesTable;
  oauth_sign_in_flows: OAuthSignInFlowsTable;
  oauth_exchange_codes: OAuthExchangeCodesTable;
  workspaces: WorkspacesTable;
  members: MembersTable;
  teams: TeamsTable;
  team_members: TeamMembersTable;
  invitations: InvitationsTable;
  sessions: SessionsTable;
  session_retired_tokens: SessionRetiredTokensTable;
  mfa_recovery_codes: MfaRecoveryCodesTable;
  app_attest_challenges: AppAttestChallengesTable;
  passkeys: PasskeysTable;
  passkey_challenges: PasskeyChallengesTable;
  app_attest_keys: AppAttestKeysTable;
  api_keys: ApiKeysTable;
  workspace_counters: WorkspaceCountersTable;
  events: EventsTable;
  idempotency_keys: IdempotencyKeysTable;
  audit_logs: AuditLogsTable;
  companies: CompaniesTable;
  contacts: ContactsTable;
  tickets: TicketsTable;
  messages: MessagesTable;
  ticket_activities: TicketActivitiesTable;
  attachments: AttachmentsTable;
  tag_groups: TagGroupsTable;
  tags: TagsTable;
  ticket_tags: TicketTagsTable;
  contact_tags: ContactTagsTable;
  company_tags: CompanyTagsTable;
  custom_fields: CustomFieldsTable;
  views: ViewsTable;
  saved_replies: SavedRepliesTable;
  kb_collections: KbCollectionsTable;
  kb_articles: KbArticlesTable;
  kb_article_slugs: KbArticleSlugsTable;
  kb_article_views: KbArticleViewsTable;
  portal_sign_in_links: PortalSignInLinksTable;
  portal_sessions: PortalSessionsTable;
  portal_limit_marks: PortalLimitMarksTable;
  widget_settings: WidgetSettingsTable;
  widget_cap_notices: WidgetCapNoticesTable;
  widget_visitors: WidgetVisitorsTable;
  stripe_events: StripeEventsTable;
  stripe_payments: StripePaymentsTable;
  stripe_recharges: StripeRechargesTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  mailboxes: MailboxesTable;
  mailbox_addresses: MailboxAddressesTable;
  inbound_emails: InboundEmailsTable;
  email_auto_replies: EmailAutoRepliesTable;
  mail_outbox: MailOutboxTable;
  notifications: NotificationsTable;
  ticket_field_sort_keys: TicketFieldSortKeysTable;
  sla_policies: SlaPoliciesTable;
  business_hours: BusinessHoursTable;
  onboarding_dismissals: OnboardingDismissalsTable;
  automations: AutomationsTable;
  automation_run_counts: AutomationRunCountsTable;
  assignment_settings: AssignmentSettingsTable;
  assignment_rules: AssignmentRulesTable;
  assignment_pointers: AssignmentPointersTable;
  triage_settings: TriageSettingsTable;
  images: ImagesTable;
  ai_settings: AiSettingsTable;
  ai_usage: AiUsageTable;
  billing_accounts: BillingAccountsTable;
  ai_ledger: AiLedgerTable;
  ai_reservations: AiReservationsTable;
  triage_models: TriageModelsTable;
  embeddings: EmbeddingsTable;
  embedding_queue: EmbeddingQueueTable;
  assistant_sessions: AssistantSessionsTable;
  assistant_turns: AssistantTurnsTable;
  assistant_steps: AssistantStepsTable;
  assistant_actions: AssistantActionsTable;
}
