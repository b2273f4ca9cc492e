// What the picture upload routes share (PUT /v1/me/avatar, /v1/contacts/{id}/avatar,
// /v1/companies/{id}/avatar, /v1/workspace/images/{slot}; each lives in its owner's routes.ts):
// a scope of their own that accepts multipart bodies (every other route still answers 415 to
// multipart), the documented body, and the description of the rules.
import multipart from '@fastify/multipart';
import type { App } from '../../platform/http/app-type.js';
import { documentedFileBody } from '../../platform/http/openapi.js';

/** Registers `routes` in a scope that parses multipart bodies. */
export async function withMultipart(app: App, routes: (scope: App) => void | Promise<void>): Promise<void> {
  await app.register(async (scope: App) => {
    await scope.register(multipart);
    await routes(scope);
  });
}

/** The route config's swaggerTransform: the multipart body as the document shows it. */
export const pictureBody = documentedFileBody(
  'The picture: PNG, JPEG, GIF or WebP (read from the bytes), at most 5 MB (413 too_large), 16 to ' +
    '4,096 px a side and at most 16 megapixels (422 image_too_large). No other part: 422 at body.file.',
);

export const PICTURE_RULES =
  'Multipart, one field named `file`. The type is read from the bytes: PNG, JPEG, GIF or WebP; anything else ' +
  '(SVG included, whatever its name or Content-Type) is 422 unsupported_image, as is a damaged file. Over 5 MB: ' +
  '413 too_large (the upload stops there). Over 4,096 px a side, over 16 megapixels or under 16 px a side: 422 ' +
  'image_too_large, decided from the header. The picture is decoded, turned by its EXIF orientation, cropped to ' +
  'a centred square (logos, favicons and the launcher icon are fitted instead), resized to 256 and 64 px and ' +
  'stored as PNG without metadata; avatar_url names it (`?s=64` for the small one). The previous picture ' +
  'stays servable for 7 days, then is removed.';
