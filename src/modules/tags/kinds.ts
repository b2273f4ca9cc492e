// The three kinds of record that carry labels, and the join table of each.
import type { TagKind } from './schemas.js';

export type TagEntity = 'ticket' | 'contact' | 'company';

export interface Kind {
  table: 'ticket_tags' | 'contact_tags' | 'company_tags';
  column: 'ticket_id' | 'contact_id' | 'company_id';
  records: 'tickets' | 'contacts' | 'companies';
  kind: TagKind;
  noun: string;
}

export const KINDS: Record<TagEntity, Kind> = {
  ticket: { table: 'ticket_tags', column: 'ticket_id', records: 'tickets', kind: 'tickets', noun: 'Ticket' },
  contact: { table: 'contact_tags', column: 'contact_id', records: 'contacts', kind: 'contacts', noun: 'Contact' },
  company: { table: 'company_tags', column: 'company_id', records: 'companies', kind: 'companies', noun: 'Company' },
};
