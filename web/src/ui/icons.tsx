// The app's icons: one maintained set (lucide-react, tree-shaken: only these are bundled), named
// here for what they stand for, so every screen draws the same thing for the same idea. Icons are
// decorative: lucide marks them aria-hidden, and the control keeps its name from its words (or
// its aria-label), so screen readers and tests find it as before. Sized by CSS (.icon: 1.1em).
import type { LucideIcon, LucideProps } from 'lucide-react';
import {
  AtSign,
  BarChart3,
  Bell,
  Bold,
  BookOpen,
  BookPlus,
  CheckCircle2,
  CircleDot,
  CircleStop,
  Clock,
  Code,
  Filter,
  Heading2,
  Heading3,
  Inbox,
  Italic,
  Keyboard,
  Languages,
  Link,
  List,
  ListChecks,
  ListFilter,
  ListOrdered,
  Menu,
  MessageCircleQuestionMark,
  MessagesSquare,
  PanelRightClose,
  PanelRightOpen,
  Paperclip,
  PauseCircle,
  Quote,
  RefreshCw,
  Send,
  Settings,
  ShieldAlert,
  Sparkles,
  SquareCode,
  User,
  WandSparkles,
  X,
} from 'lucide-react';

export const ICONS = {
  bold: Bold,
  chats: MessagesSquare,
  close: X,
  code: Code,
  codeBlock: SquareCode,
  filters: Filter,
  getStarted: ListChecks,
  heading2: Heading2,
  heading3: Heading3,
  hideDetails: PanelRightClose,
  italic: Italic,
  kb: BookOpen,
  link: Link,
  mention: AtSign,
  menu: Menu,
  notifications: Bell,
  numberedList: ListOrdered,
  bulletedList: List,
  quote: Quote,
  reports: BarChart3,
  savedReplies: MessagesSquare,
  savedView: ListFilter,
  send: Send,
  settings: Settings,
  shortcuts: Keyboard,
  showDetails: PanelRightOpen,
  solve: CheckCircle2,
  attach: Paperclip,
  // AI (screens/ticket/ai-*.tsx, screens/kb/ai-*.tsx).
  ai: Sparkles,
  ask: MessageCircleQuestionMark,
  articleDraft: BookPlus,
  refresh: RefreshCw,
  rewrite: WandSparkles,
  stop: CircleStop,
  translate: Languages,
  // The built-in views (lib/views.ts's ids).
  unassigned: Inbox,
  mine: User,
  open: CircleDot,
  pending: Clock,
  on_hold: PauseCircle,
  solved: CheckCircle2,
  spam: ShieldAlert,
} satisfies Record<string, LucideIcon>;

export type IconName = keyof typeof ICONS;

/** An icon by its name here: decorative (aria-hidden), 1.1em square unless CSS says otherwise. */
export function Icon({ name, className, ...rest }: { name: IconName } & Omit<LucideProps, 'ref'>) {
  const C = ICONS[name];
  return <C aria-hidden="true" focusable="false" className={className ? `icon ${className}` : 'icon'} {...rest} />;
}
