// An article in the editor: title, collection, language, slug (a taken one is the API's 409,
// shown at the field), the body in TipTap (rich text saved as HTML; the service sanitizes it), an
// optional excerpt. Save draft, publish, unpublish; a draft's preview renders here, a published
// article opens on the public help center. Its views and status are shown; delete asks first.
import * as Dialog from '@radix-ui/react-dialog';
import { Link, useNavigate } from '@tanstack/react-router';
import TiptapLink from '@tiptap/extension-link';
import { type Editor, EditorContent, useEditor } from '@tiptap/react';
import StarterKit from '@tiptap/starter-kit';
import { type FormEvent, useId, useState } from 'react';
import { type Article, useArticle, useCollections, useDeleteArticle, useSaveArticle } from '../../data/kb';
import { useWorkspaceRecord } from '../../data/workspace';
import { ApiError } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { every } from '../../lib/every';
import { when } from '../../lib/format';
import { canWrite, useRole } from '../../lib/role';
import { ConfirmButton, fieldError, SelectField, TextField } from '../../ui/form';
import { FORMAT, type FormatTool, FormatToolbar } from '../../ui/format-toolbar';
import { LinkTool } from '../../ui/link-tool';
import { ErrorNote, Loading, PageTitle } from '../../ui/page';

import '../../ui/prosemirror.css';

type Language = Article['language'];
// The API's languages (src/modules/kb/schemas.ts), English first; the type check names one it adds.
const LANGUAGES = every<Exclude<Language, 'other'>>()([
  'en',
  'ar',
  'ca',
  'da',
  'de',
  'el',
  'es',
  'eu',
  'fi',
  'fr',
  'ga',
  'hi',
  'hu',
  'hy',
  'id',
  'it',
  'lt',
  'ne',
  'nl',
  'no',
  'pt',
  'ro',
  'ru',
  'sr',
  'sv',
  'ta',
  'tr',
  'yi',
]);

const languageName = (() => {
  try {
    const names = new Intl.DisplayNames(undefined, { type: 'language' });
    return (code: string) => names.of(code) ?? code;
  } catch {
    return (code: string) => code;
  }
})();

const LANGUAGE_OPTIONS: Array<[string, string]> = [
  ...LANGUAGES.map((l): [string, string] => [l, `${languageName(l)} (${l})`]),
  ['other', 'Another language (words matched as written)'],
];

/** The notice of a publication while the help center is off (the default): it says so, with the way. */
const HC_OFF = 'published-help-center-off';

function HelpCenterOff({ children }: { children: string }) {
  return (
    <>
      {children}: turn it on in{' '}
      <Link to="/settings/$" params={{ _splat: 'help-center' }}>
        Settings → Help center
      </Link>
      .
    </>
  );
}

/** Said once on the page an action led to (a new article's first save opens its own address). */
let noticeAfterNavigation: string | null = null;

/** A new article's first words, written elsewhere (an AI draft: kb/ai-draft.tsx): not saved yet. */
export interface ArticleStart {
  title: string;
  body_html: string;
  excerpt?: string | null;
  language?: string | null;
  /** What the form says about where it came from, until it is saved. */
  notice: string;
}

export function ArticleEditor({
  id,
  collectionId,
  start,
}: {
  id: string | null;
  collectionId: string | null;
  start?: ArticleStart;
}) {
  const ws = useWorkspace();
  const article = useArticle(ws, id);
  if (id && article.error) {
    return (
      <div className="screen kb">
        <PageTitle>Article</PageTitle>
        {article.error instanceof ApiError && article.error.status === 404 ? (
          <p role="alert">There is no such article in this workspace: it may have been deleted.</p>
        ) : (
          <ErrorNote error={article.error} what="Could not load the article" />
        )}
        <Link to="/knowledge-base">Back to the knowledge base</Link>
      </div>
    );
  }
  if (id && !article.data) return <Loading label="Loading the article…" />;
  return <ArticleForm article={article.data ?? null} collectionId={collectionId} start={start} />;
}

const startLanguage = (l: string | null | undefined): Language | undefined =>
  l
    ? (LANGUAGES as readonly string[]).includes(l.split('-')[0]!)
      ? (l.split('-')[0] as Language)
      : 'other'
    : undefined;

function ArticleForm({
  article,
  collectionId,
  start,
}: {
  article: Article | null;
  collectionId: string | null;
  start?: ArticleStart;
}) {
  const ws = useWorkspace();
  const navigate = useNavigate();
  const writer = canWrite(useRole());
  const collections = useCollections(ws);
  const saveArticle = useSaveArticle(ws);
  const deleteArticle = useDeleteArticle(ws);
  const workspace = useWorkspaceRecord(ws);
  const [title, setTitle] = useState(article?.title ?? start?.title ?? '');
  const [slug, setSlug] = useState(article?.slug ?? '');
  const [slugEdited, setSlugEdited] = useState(false);
  const [collection, setCollection] = useState(article?.collection_id ?? collectionId ?? '');
  const [language, setLanguage] = useState<Language>(article?.language ?? startLanguage(start?.language) ?? 'en');
  const [excerpt, setExcerpt] = useState(article?.excerpt ?? start?.excerpt ?? '');
  // Sent only once changed here: the API answers the derived excerpt (the body's start) like a
  // given one, and sending that back would stop it from following the body.
  const [excerptEdited, setExcerptEdited] = useState(!!start?.excerpt);
  const [dirty, setDirty] = useState(!!start);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(() => {
    const n = noticeAfterNavigation;
    noticeAfterNavigation = null;
    return n ?? start?.notice ?? null;
  });
  const bodyLabel = useId();

  const editor = useEditor({
    extensions: [
      StarterKit.configure({ heading: { levels: [2, 3] }, link: false }),
      TiptapLink.configure({ openOnClick: false, autolink: true, defaultProtocol: 'https' }),
    ],
    content: article?.body_html ?? start?.body_html ?? '',
    editable: writer,
    immediatelyRender: true,
    // Its few rules are in ui/prosemirror.css: an injected <style> would need the CSP's nonce.
    injectCSS: false,
    editorProps: {
      attributes: {
        role: 'textbox',
        'aria-multiline': 'true',
        'aria-labelledby': bodyLabel,
        class: 'kb-body kb-prose',
      },
    },
    onUpdate: () => setDirty(true),
  });

  const published = article?.status === 'published';
  const wsData = workspace.data;
  const publicUrl =
    article && wsData ? `${location.origin}/hc/${wsData.slug}/articles/${encodeURIComponent(article.slug)}` : null;
  const slugError =
    fieldError(error, 'slug') ?? (error instanceof ApiError && error.status === 409 ? error.message : undefined);
  const titleError = fieldError(error, 'title');

  const save = async (status?: 'draft' | 'published') => {
    if (!editor || busy) return;
    if (!title.trim()) {
      setError(
        new ApiError(422, 'validation', 'Give the article a title.', null, [
          { location: 'body.title', message: 'Give the article a title.' },
        ]),
      );
      return;
    }
    setBusy(true);
    setError(null);
    setNotice(null);
    const body = {
      title: title.trim(),
      body_html: editor.getHTML(),
      collection_id: collection || null,
      language,
      ...(excerptEdited ? { excerpt: excerpt.trim() || null } : {}),
      ...(slugEdited && slug.trim() ? { slug: slug.trim() } : {}),
      ...(status ? { status } : {}),
    };
    try {
      const saved = await saveArticle.mutateAsync({ id: article?.id ?? null, body });
      const said =
        status === 'published' && !published
          ? wsData?.settings.help_center_enabled === false
            ? HC_OFF
            : 'Published: it is on the help center.'
          : status === 'draft' && published
            ? 'Unpublished: it is a draft again, off the help center.'
            : saved.status === 'draft'
              ? 'Draft saved.'
              : 'Saved: the help center shows the change.';
      setSlug(saved.slug);
      setSlugEdited(false);
      setExcerpt(saved.excerpt);
      setExcerptEdited(false);
      setDirty(false);
      if (!article) {
        noticeAfterNavigation = said;
        await navigate({ to: '/knowledge-base/$', params: { _splat: `articles/${saved.id}` }, replace: true });
      } else setNotice(said);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    void save(published ? undefined : 'draft');
  };

  return (
    <div className="screen kb kb-editor">
      <Link to="/knowledge-base" className="back">
        ← Knowledge base
      </Link>
      <PageTitle>{article ? `Edit: ${article.title}` : 'New article'}</PageTitle>
      {!writer && <p className="hint">Only agents and admins can change articles: this is a read-only view.</p>}
      {article && (
        <dl className="kb-meta">
          <div>
            <dt>Status</dt>
            <dd>
              <span className={`kb-status kb-status-${article.status}`}>{published ? 'Published' : 'Draft'}</span>
            </dd>
          </div>
          <div>
            <dt>Views</dt>
            <dd>{article.views}</dd>
          </div>
          {article.published_at && (
            <div>
              <dt>First published</dt>
              <dd>
                <time dateTime={article.published_at}>{when(article.published_at)}</time>
              </dd>
            </div>
          )}
          <div>
            <dt>Last saved</dt>
            <dd>
              <time dateTime={article.updated_at}>{when(article.updated_at)}</time>
            </dd>
          </div>
        </dl>
      )}
      <form onSubmit={onSubmit} aria-label="Article">
        <fieldset disabled={!writer} className="kb-fields">
          <TextField
            label="Title"
            value={title}
            onChange={(e) => {
              setTitle(e.target.value);
              setDirty(true);
            }}
            maxLength={200}
            required
            error={titleError}
          />
          <div className="kb-row">
            <SelectField
              label="Collection"
              value={collection}
              onChange={(e) => {
                setCollection(e.target.value);
                setDirty(true);
              }}
              options={[
                ['', 'No collection'],
                ...(collections.data ?? []).map((c): [string, string] => [c.id, c.name]),
              ]}
            />
            <SelectField
              label="Language"
              value={language}
              onChange={(e) => {
                setLanguage(e.target.value as Language);
                setDirty(true);
              }}
              options={LANGUAGE_OPTIONS}
              hint="Search finds the article's words in this language."
            />
          </div>
          <TextField
            label="Address (slug)"
            value={slug}
            placeholder={article ? undefined : 'made from the title'}
            onChange={(e) => {
              setSlug(e.target.value.toLowerCase());
              setSlugEdited(true);
              setDirty(true);
            }}
            maxLength={100}
            pattern="[a-z0-9]+(-[a-z0-9]+)*"
            hint={
              slugEdited
                ? 'Lower-case letters, digits and single hyphens. The old address keeps working (it redirects).'
                : 'Follows the title unless you change it. Old addresses keep working (they redirect).'
            }
            error={slugError}
          />
        </fieldset>
        <div className="field kb-body-field">
          <span id={bodyLabel} className="kb-body-label">
            Body
          </span>
          {writer && editor && <Toolbar editor={editor} />}
          <EditorContent editor={editor} className="kb-body-frame" />
        </div>
        <fieldset disabled={!writer} className="kb-fields">
          <TextField
            label="Excerpt (optional)"
            value={excerpt}
            onChange={(e) => {
              setExcerpt(e.target.value);
              setExcerptEdited(true);
              setDirty(true);
            }}
            maxLength={500}
            hint="Shown in search results and link previews. Unless you write one, it is the start of the body."
          />
        </fieldset>
        {error && !slugError && !titleError ? <ErrorNote error={error} what="Could not save the article" /> : null}
        <p className="sent" role="status">
          {notice === HC_OFF ? <HelpCenterOff>Published, but the help center is off</HelpCenterOff> : null}
          {notice !== HC_OFF ? (notice ?? (dirty && writer ? 'Unsaved changes.' : '')) : null}
        </p>
        <div className="kb-actions">
          {writer && !published && (
            <>
              <button type="submit" className="button" disabled={busy}>
                Save draft
              </button>
              <button type="button" className="primary" disabled={busy} onClick={() => void save('published')}>
                Publish
              </button>
            </>
          )}
          {writer && published && (
            <>
              <button type="submit" className="primary" disabled={busy}>
                Save changes
              </button>
              <button type="button" className="button" disabled={busy} onClick={() => void save('draft')}>
                Unpublish
              </button>
            </>
          )}
          {published && publicUrl ? (
            <a className="button" href={publicUrl} target="_blank" rel="noopener">
              View on the help center<span className="visually-hidden"> (opens in a new tab)</span>
            </a>
          ) : (
            editor && <Preview editor={editor} title={title} />
          )}
          {writer && article && (
            <ConfirmButton
              title={`Delete the article “${article.title}”?`}
              description={
                published
                  ? 'It leaves the help center at once and cannot be brought back.'
                  : 'The draft cannot be brought back.'
              }
              confirm="Delete article"
              onConfirm={async () => {
                await deleteArticle.mutateAsync(article.id);
                await navigate({ to: '/knowledge-base' });
              }}
            >
              Delete
            </ConfirmButton>
          )}
        </div>
        {published && notice !== HC_OFF && wsData && !wsData.settings.help_center_enabled && (
          <p className="hint">
            <HelpCenterOff>The help center is off, so readers cannot see it yet</HelpCenterOff>
          </p>
        )}
      </form>
    </div>
  );
}

/** A draft as readers will see it: rendered here (it has no public address yet). */
function Preview({ editor, title }: { editor: Editor; title: string }) {
  const [html, setHtml] = useState('');
  return (
    <Dialog.Root onOpenChange={(o) => o && setHtml(editor.getHTML())}>
      <Dialog.Trigger className="button">Preview</Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog kb-preview-dialog">
          <Dialog.Title>Preview: {title || 'Untitled'}</Dialog.Title>
          <Dialog.Description className="hint">
            How the article reads once published (the help center adds its header and styles).
          </Dialog.Description>
          {/* The editor's own HTML: TipTap's schema only produces its known elements and attributes. */}
          {/* biome-ignore lint/security/noDangerouslySetInnerHtml: produced by TipTap's schema, not typed HTML */}
          <article className="kb-prose kb-preview" dangerouslySetInnerHTML={{ __html: html }} />
          <div className="dialog-actions">
            <Dialog.Close className="button">Close preview</Dialog.Close>
          </div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

const TOOLS: FormatTool[] = [
  FORMAT.bold,
  FORMAT.italic,
  {
    // The title is the article's h1 (here and on the help center): the body's headings start at h2.
    label: 'Subheading',
    icon: 'heading2',
    keys: 'Ctrl+Alt+2',
    active: (e) => e.isActive('heading', { level: 2 }),
    run: (e) => e.chain().focus().toggleHeading({ level: 2 }).run(),
  },
  {
    label: 'Minor heading',
    icon: 'heading3',
    keys: 'Ctrl+Alt+3',
    active: (e) => e.isActive('heading', { level: 3 }),
    run: (e) => e.chain().focus().toggleHeading({ level: 3 }).run(),
  },
  FORMAT.bulletedList,
  FORMAT.numberedList,
  {
    label: 'Code',
    icon: 'code',
    keys: 'Ctrl+E',
    active: (e) => e.isActive('code'),
    run: (e) => e.chain().focus().toggleCode().run(),
  },
  {
    label: 'Code block',
    icon: 'codeBlock',
    keys: 'Ctrl+Alt+C',
    active: (e) => e.isActive('codeBlock'),
    run: (e) => e.chain().focus().toggleCodeBlock().run(),
  },
];

/**
 * The formatting buttons (ui/format-toolbar.tsx): one tab stop, the arrow keys move along them,
 * each an icon named by its word (its tooltip too) and pressed when the selection has it; the link last.
 */
function Toolbar({ editor }: { editor: Editor }) {
  return <FormatToolbar editor={editor} tools={[...TOOLS, { key: 'link', node: <LinkTool editor={editor} /> }]} />;
}
