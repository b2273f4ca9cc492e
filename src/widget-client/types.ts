// What the widget's routes answer (docs/widget.md "Routes"; the server's shapes are in
// src/modules/widget/schemas.ts). The browser code has its own copy: it is built for browsers,
// apart from the server's program.

export interface Config {
  workspace_name: string;
  brand_color: string;
  greeting: string;
  help_center_url: string | null;
  require_email: boolean;
}

export interface Contact {
  id: string;
  email: string | null;
  name: string | null;
  avatar_url: string | null;
}

export interface Session {
  visitor_token: string;
  contact: Contact;
  ws_token: string;
  gateway_url: string;
  topic: string;
}

export interface Conversation {
  id: string;
  number: number;
  subject: string;
  status: string;
  created_at: string;
  last_message_at: string | null;
  /** The rating page while the conversation is solved and the workspace asks for ratings. */
  csat_url: string | null;
}

export interface Attachment {
  id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  url: string;
}

export interface Message {
  id: string;
  conversation_id: string;
  direction: 'inbound' | 'outbound';
  body_html: string;
  body_text: string;
  author: { type: 'contact' | 'agent' | 'ai'; name: string | null; avatar_url: string | null };
  attachments: Attachment[];
  created_at: string;
}

export interface Article {
  title: string;
  excerpt: string;
  url: string;
}

/** What identify() takes: a signed-in person of the host site (user_hash from its server). */
export interface Identity {
  user_id?: string;
  user_hash?: string;
  email?: string;
  name?: string;
  /** The person's picture, an https:// URL (taken only with user_id and user_hash). */
  avatar_url?: string;
}

/** An agent online now (presence on the contact topic). */
export interface Agent {
  id: string;
  name: string | null;
  avatar: string | null;
}
