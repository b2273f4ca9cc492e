import type { ColumnType } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type DefaultTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface PasskeysTable {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: string;
  counter: ColumnType<string | number, number | undefined, number>;
  transports: ColumnType<string, string | undefined, string>;
  name: string;
  created_at: DefaultTimestamp;
  last_used_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface PasskeyChallengesTable {
  id: string;
  challenge: string;
  purpose: 'register' | 'sign_in';
  user_id: string | null;
  expires_at: Timestamp;
  created_at: DefaultTimestamp;
}
