import { Type } from '@sinclair/typebox';
import { TOKEN_PATTERN } from './urls.js';

export const Attachment = Type.Object(
  {
    id: Type.String(),
    filename: Type.String({ description: 'As uploaded, without any path or control characters; "file" when absent.' }),
    content_type: Type.String({ description: 'Sniffed from the bytes (the declared type is ignored).' }),
    size_bytes: Type.Integer(),
    inline: Type.Boolean({ description: 'An inline part of an email (cid: image); false for uploads.' }),
    url: Type.String({
      description: 'Download URL carrying a ?token= valid for one hour: works without other credentials (img tags).',
    }),
  },
  { title: 'Attachment' },
);

export const DownloadQuery = Type.Object(
  {
    token: Type.Optional(
      Type.String({
        pattern: TOKEN_PATTERN,
        description: 'The token of an Attachment url (no other credential needed); invalid or expired: 404.',
      }),
    ),
  },
  { additionalProperties: false },
);
