// Every TanStack Query key of the app, in one place: each resource's hooks (web/src/data/<resource>.ts)
// and the live events' effect on the cache (lib/queries.ts applyEvent) name the same keys, and a
// key always starts with the resource's name and the workspace, so that everything of a workspace
// can be refetched at once (reloadWorkspace).
export const keys = {
  counts: (ws: string) => ['counts', ws] as const,
  views: (ws: string) => ['views', ws] as const,
  tickets: (ws: string) => ['tickets', ws] as const,
  ticket: (ws: string, number: number) => ['ticket', ws, number] as const,
  messages: (ws: string, id: string) => ['messages', ws, id] as const,
  activities: (ws: string, id: string) => ['activities', ws, id] as const,
  /** Workspace definitions the inbox and the ticket page pick from (members, teams, labels, fields). */
  members: (ws: string) => ['members', ws] as const,
  teams: (ws: string) => ['teams', ws] as const,
  tags: (ws: string) => ['tags', ws] as const,
  tagGroups: (ws: string) => ['tag-groups', ws] as const,
  fields: (ws: string) => ['custom-fields', ws] as const,
  savedReplies: (ws: string) => ['saved-replies', ws] as const,
  contact: (ws: string, id: string) => ['contact', ws, id] as const,
  company: (ws: string, id: string) => ['company', ws, id] as const,
  contactTickets: (ws: string, id: string) => ['contact-tickets', ws, id] as const,
  /** A ticket known by its id (links between tickets): not per workspace, its id says which. */
  ticketById: (id: string) => ['ticket-by-id', id] as const,
  followUps: (ws: string, id: string) => ['followUps', ws, id] as const,
  mergeSearch: (ws: string, q: string) => ['merge-search', ws, q] as const,
  messageOriginal: (id: string) => ['message-original', id] as const,
  /** The knowledge base: everything of it starts with kb(ws). */
  kb: (ws: string) => ['kb', ws] as const,
  kbCollections: (ws: string) => ['kb', ws, 'collections'] as const,
  kbArticles: (ws: string, filter: object) => ['kb', ws, 'articles', filter] as const,
  kbArticle: (ws: string, id: string) => ['kb', ws, 'article', id] as const,
  reports: (ws: string, from: string, to: string) => ['reports', ws, from, to] as const,
  /** The bell's count and the popover's list: everything of it starts with notifications(ws). */
  notifications: (ws: string) => ['notifications', ws] as const,
  unreadNotifications: (ws: string) => ['notifications', ws, 'unread'] as const,
  notificationList: (ws: string) => ['notifications', ws, 'list'] as const,
  onboarding: (ws: string) => ['onboarding', ws] as const,
  /** Not per workspace: the accounts of this browser, an invitation looked up by its token. */
  accounts: (userId: string) => ['accounts', userId] as const,
  invitation: (token: string) => ['invitation', token] as const,
  /** The workspace record (its slug makes the public addresses; its settings). */
  workspace: (ws: string) => ['workspace', ws] as const,
  /** Whether outgoing mail is set up (GET /v1/mail/status). */
  mailStatus: (ws: string) => ['mail-status', ws] as const,
  // Settings
  /** Settings' own full copies of the definitions (archived ones too): ['config', ws, <resource>]. */
  config: (ws: string) => ['config', ws] as const,
  configTags: (ws: string) => ['config', ws, 'tags'] as const,
  configTagGroups: (ws: string) => ['config', ws, 'tag-groups'] as const,
  configFields: (ws: string) => ['config', ws, 'custom-fields'] as const,
  configMembers: (ws: string) => ['config', ws, 'members'] as const,
  configTeams: (ws: string) => ['config', ws, 'teams'] as const,
  configMailboxes: (ws: string) => ['config', ws, 'mailboxes'] as const,
  configSavedReplies: (ws: string) => ['config', ws, 'saved-replies'] as const,
  slaPolicies: (ws: string) => ['config', ws, 'sla-policies'] as const,
  businessHours: (ws: string) => ['config', ws, 'business-hours'] as const,
  automations: (ws: string) => ['automations', ws] as const,
  automation: (ws: string, id: string | null) => ['automation', ws, id] as const,
  webhooks: (ws: string) => ['webhooks', ws] as const,
  webhook: (ws: string, id: string) => ['webhook', ws, id] as const,
  webhookDeliveries: (ws: string, id: string) => ['webhook-deliveries', ws, id] as const,
  webhookDelivery: (ws: string, id: string) => ['webhook-delivery', ws, id] as const,
  /** Mailboxes as the API pages them ({ data, next_cursor }). */
  mailboxes: (ws: string) => ['mailboxes', ws] as const,
  mailbox: (ws: string, id: string) => ['mailbox', ws, id] as const,
  assignment: (ws: string) => ['assignment', ws] as const,
  /** Triage settings and the engine's state (data/triage.ts). */
  triage: (ws: string) => ['triage', ws] as const,
  /** The plan, seats, AI balance and auto-recharge (data/billing.ts); the usage report under it. */
  billing: (ws: string) => ['billing', ws] as const,
  billingUsage: (ws: string) => ['billing', ws, 'usage'] as const,
  /** Assignment's rule targets: one page of teams and of mailboxes. */
  teamsPage: (ws: string) => ['teams', ws, 'page'] as const,
  mailboxesPage: (ws: string) => ['mailboxes', ws, 'page'] as const,
  apiKeys: (ws: string) => ['api-keys', ws] as const,
  auditLogs: (ws: string, filters: object) => ['audit-logs', ws, filters] as const,
  invitations: (ws: string) => ['invitations', ws] as const,
  /** Where the person is signed in (any workspace: the key names the user). */
  authMethods: () => ['auth-methods'] as const,
  mePasskeys: (userId: string) => ['me-passkeys', userId] as const,
  meIdentities: (userId: string) => ['me-identities', userId] as const,
  meSessions: (userId?: string) => (userId ? (['me-sessions', userId] as const) : (['me-sessions'] as const)),
  notificationsAll: (ws: string, unreadOnly: boolean) => ['notifications', ws, 'all', unreadOnly] as const,
  notificationSettings: (ws: string) => ['notification-settings', ws] as const,
  widgetSettings: (ws: string) => ['widget-settings', ws] as const,
  mailOutbox: (ws: string) => ['mail-outbox', ws] as const,
  mailOutboxItem: (ws: string, id: string) => ['mail-outbox', ws, id] as const,
  /** AI (data/ai.ts). */
  aiConfig: (ws: string) => ['ai', ws, 'config'] as const,
  aiModels: (ws: string) => ['ai', ws, 'models'] as const,
  aiSettings: (ws: string) => ['ai', ws, 'settings'] as const,
  /** A message translated into the agent's language. */
  aiTranslation: (ws: string, messageId: string, target: string) =>
    ['ai', ws, 'translation', messageId, target] as const,
  /** An article drafted from a ticket (not saved): asked once while its editor is open. */
  aiArticleDraft: (ws: string, ticketId: string) => ['ai', ws, 'article-draft', ticketId] as const,
  /** GET /v1/ai/search of q (the inbox's semantic matches, a ticket's similar tickets). */
  aiSearch: (ws: string, q: string) => ['ai', ws, 'search', q] as const,
  /** The assistant's panel (data/assistant.ts): everything of it starts with assistant(ws). */
  assistant: (ws: string) => ['assistant', ws] as const,
  assistantSessions: (ws: string) => ['assistant', ws, 'sessions'] as const,
  assistantSession: (ws: string, id: string) => ['assistant', ws, 'session', id] as const,
  assistantTips: (ws: string) => ['assistant', ws, 'tips'] as const,
};
