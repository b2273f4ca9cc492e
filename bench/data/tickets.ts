// A generated support-ticket data set for the dedicated triage engine's benchmark and its
// accuracy table (docs/ai.md "The dedicated engine"). No public support-ticket data set on the
// npm registry has a licence that fits, so this one is made from templates: topics (billing,
// sign-in, outages, bugs, how-to questions, feature requests, shipping, account closure, spam),
// each with subjects, openings and details in four languages (mostly English), senders at
// companies of three tiers, and the fields an agent would have set when solving it: priority
// (from the topic, urgency words and the sender's tier), severity, the Type label, the team,
// spam and whether the SLA was breached. A share of the labels is flipped on purpose (agents
// disagree), so no model can reach 100%.
//
// What it cannot show: real wording (the templates repeat; real tickets ramble, quote mail
// history and mix topics), real label noise (here it is uniform), drift over time, and rare
// classes as they really occur. The figures it gives are for comparing versions of the engine
// and for checking calibration, not a promise of accuracy on a real workspace.
import { prng } from '../../src/modules/triage/dedicated/linear.js';
import type { Example } from '../../src/modules/triage/dedicated/model.js';

type Lang = 'en' | 'es' | 'de' | 'fr';

interface Topic {
  name: string;
  weight: number;
  subjects: Record<Lang, string[]>;
  details: string[];
  priority: string[]; // base priorities it takes
  severity: Array<string | null>;
  type: string | null;
  team: string | null;
  spam?: boolean;
}

const T = (en: string[], es: string[], de: string[], fr: string[]) => ({ en, es, de, fr });

const TOPICS: Topic[] = [
  {
    name: 'billing',
    weight: 18,
    subjects: T(
      [
        'Charged twice this month',
        'Invoice is wrong',
        'Refund request',
        'Question about my bill',
        'Card declined on renewal',
        'VAT missing on invoice',
      ],
      ['Me cobraron dos veces', 'La factura es incorrecta', 'Solicitud de reembolso'],
      ['Doppelt abgebucht', 'Rechnung ist falsch', 'Rückerstattung bitte'],
      ['Facturé deux fois', 'Facture incorrecte', 'Demande de remboursement'],
    ),
    details: [
      'invoice',
      'charge',
      'credit card',
      'refund',
      'billing',
      'subscription',
      'payment',
      'receipt',
      'VAT number',
      'plan',
    ],
    priority: ['normal', 'normal', 'high', 'low'],
    severity: [null],
    type: 'Question',
    team: 'Billing',
  },
  {
    name: 'login',
    weight: 16,
    subjects: T(
      [
        'Cannot log in',
        'Password reset email never arrives',
        'Locked out of my account',
        '2FA code not accepted',
        'SSO login fails',
      ],
      ['No puedo iniciar sesión', 'No llega el correo de contraseña'],
      ['Kann mich nicht anmelden', 'Passwort zurücksetzen geht nicht'],
      ['Impossible de me connecter', 'Mot de passe oublié ne marche pas'],
    ),
    details: ['password', 'login page', 'two-factor', 'authenticator', 'SSO', 'session', 'reset link', 'account'],
    priority: ['normal', 'high', 'normal'],
    severity: [null, 'sev3'],
    type: 'Question',
    team: 'Accounts',
  },
  {
    name: 'outage',
    weight: 8,
    subjects: T(
      [
        'Site is down',
        'Everything returns 500 errors',
        'API not responding',
        'Production outage',
        'Dashboard will not load for anyone',
      ],
      ['El sitio no funciona', 'Caída en producción'],
      ['Seite ist nicht erreichbar', 'Produktionsausfall'],
      ['Le site est en panne', 'Panne en production'],
    ),
    details: [
      'all users',
      'production',
      'timeout',
      '500 error',
      'API',
      'since this morning',
      'whole team blocked',
      'status page',
    ],
    priority: ['urgent', 'urgent', 'high'],
    severity: ['sev1', 'sev1', 'sev2'],
    type: 'Incident',
    team: 'Engineering',
  },
  {
    name: 'bug',
    weight: 16,
    subjects: T(
      [
        'Export button does nothing',
        'Report shows wrong totals',
        'App crashes when uploading',
        'Search returns nothing',
        'Notifications arrive twice',
      ],
      ['El botón de exportar no funciona', 'La aplicación se cierra'],
      ['Export funktioniert nicht', 'App stürzt ab beim Hochladen'],
      ["L'export ne fonctionne pas", "L'application plante"],
    ),
    details: [
      'export',
      'CSV',
      'upload',
      'crash',
      'browser',
      'Chrome',
      'mobile app',
      'report',
      'filter',
      'error message',
      'screenshot',
    ],
    priority: ['normal', 'high', 'normal', 'low'],
    severity: ['sev3', 'sev2', 'sev4', 'sev3'],
    type: 'Bug',
    team: 'Engineering',
  },
  {
    name: 'howto',
    weight: 16,
    subjects: T(
      [
        'How do I add a teammate?',
        'Where can I change my email?',
        'How to set up the integration',
        'Question about permissions',
        'Can I import my data?',
      ],
      ['¿Cómo agrego un usuario?', '¿Dónde cambio mi correo?'],
      ['Wie füge ich einen Kollegen hinzu?', 'Wo ändere ich meine E-Mail?'],
      ['Comment ajouter un collègue ?', 'Où changer mon adresse ?'],
    ),
    details: ['settings', 'teammate', 'permissions', 'integration', 'import', 'documentation', 'guide', 'role'],
    priority: ['low', 'normal', 'low'],
    severity: [null],
    type: 'Question',
    team: null,
  },
  {
    name: 'feature',
    weight: 9,
    subjects: T(
      [
        'Feature request: dark mode',
        'Would love a calendar view',
        'Please add an API for reports',
        'Suggestion for the editor',
      ],
      ['Sugerencia: modo oscuro'],
      ['Wunsch: Dunkelmodus'],
      ['Suggestion : mode sombre'],
    ),
    details: ['would be great', 'suggestion', 'roadmap', 'idea', 'competitor has', 'our team wants'],
    priority: ['low', 'low', 'normal'],
    severity: [null],
    type: 'Feature request',
    team: null,
  },
  {
    name: 'shipping',
    weight: 7,
    subjects: T(
      ['Where is my order?', 'Package never arrived', 'Tracking number not working', 'Wrong item delivered'],
      ['¿Dónde está mi pedido?', 'El paquete no llegó'],
      ['Wo ist meine Bestellung?', 'Paket nie angekommen'],
      ['Où est ma commande ?', 'Colis jamais reçu'],
    ),
    details: ['order', 'tracking', 'courier', 'delivery', 'address', 'package', 'warehouse'],
    priority: ['normal', 'high', 'normal'],
    severity: [null],
    type: 'Question',
    team: 'Billing',
  },
  {
    name: 'closure',
    weight: 4,
    subjects: T(
      ['Please delete my account', 'Cancel my subscription', 'GDPR data request'],
      ['Eliminar mi cuenta'],
      ['Konto löschen bitte'],
      ['Supprimer mon compte'],
    ),
    details: ['delete', 'cancel', 'GDPR', 'personal data', 'close the account', 'no longer need'],
    priority: ['normal', 'high'],
    severity: [null],
    type: 'Question',
    team: 'Accounts',
  },
  {
    name: 'spam',
    weight: 6,
    subjects: T(
      [
        'Boost your SEO ranking today',
        'Partnership opportunity',
        'You won a gift card',
        'Cheap backlinks for your site',
        'Grow your followers fast',
      ],
      ['Oferta exclusiva para su negocio'],
      ['Exklusives Angebot für Ihr Unternehmen'],
      ['Offre exclusive pour votre entreprise'],
    ),
    details: ['limited offer', 'click here', 'guaranteed results', 'unsubscribe', 'best price', 'marketing agency'],
    priority: ['normal'],
    severity: [null],
    type: null,
    team: null,
    spam: true,
  },
];

const OPEN: Record<Lang, string[]> = {
  en: ['Hi team,', 'Hello,', 'Hi there,', 'Good morning,', 'Dear support,'],
  es: ['Hola,', 'Buenos días,', 'Estimado soporte,'],
  de: ['Hallo,', 'Guten Tag,', 'Liebes Support-Team,'],
  fr: ['Bonjour,', "Bonjour l'équipe,", 'Madame, Monsieur,'],
};

const BODY: Record<Lang, string[]> = {
  en: [
    'I have a problem with the {d} and I need help.',
    'Since yesterday the {d} does not work as expected.',
    'Could you look into the {d}? We noticed it this week.',
    'We are having trouble with the {d} on our account.',
    'Something is wrong with the {d}, details below.',
  ],
  es: ['Tengo un problema con {d} y necesito ayuda.', 'Desde ayer {d} no funciona como debería.'],
  de: ['Ich habe ein Problem mit {d} und brauche Hilfe.', 'Seit gestern funktioniert {d} nicht.'],
  fr: ["J'ai un problème avec {d} et j'ai besoin d'aide.", 'Depuis hier {d} ne fonctionne pas.'],
};

const URGENT: Record<Lang, string[]> = {
  en: [
    'This is blocking our whole team.',
    'We are losing customers right now.',
    'Please treat this as urgent.',
    'Our launch is tomorrow.',
  ],
  es: ['Es urgente, estamos bloqueados.'],
  de: ['Das ist dringend, wir sind blockiert.'],
  fr: ["C'est urgent, nous sommes bloqués."],
};

const CLOSE: Record<Lang, string[]> = {
  en: ['Thanks!', 'Thank you for your help.', 'Best regards,', 'Cheers,', 'Looking forward to your answer.'],
  es: ['Gracias.', 'Saludos cordiales,'],
  de: ['Danke!', 'Viele Grüße,'],
  fr: ['Merci !', 'Cordialement,'],
};

const TIERS = [
  { domains: ['bigbank.com', 'megacorp.io', 'globalretail.com', 'enterprise-health.org'], bump: 1, weight: 2 },
  {
    domains: ['acme.co', 'startup.dev', 'shopfront.net', 'agency.studio', 'bakery.fr', 'taller.es'],
    bump: 0,
    weight: 5,
  },
  { domains: ['gmail.com', 'outlook.com', 'yahoo.com', 'proton.me', 'web.de'], bump: -1, weight: 4 },
];
const SPAM_DOMAINS = ['seo-masters.biz', 'promo-mail.top', 'growth-hack.click', 'gmail.com'];
const CHANNELS = ['email', 'email', 'email', 'chat', 'api'];
const MAILBOXES = ['support-mailbox', 'billing-mailbox', null];
const PRIORITIES = ['low', 'normal', 'high', 'urgent'];

/** The engine's seeded PRNG (mulberry32), with picks over it. */
function rng(seed: number) {
  const next = prng(seed);
  const pick = <X>(xs: X[]): X => xs[Math.floor(next() * xs.length)]!;
  const weighted = <X extends { weight: number }>(xs: X[]): X => {
    const total = xs.reduce((s, x) => s + x.weight, 0);
    let r = next() * total;
    for (const x of xs) {
      r -= x.weight;
      if (r < 0) return x;
    }
    return xs[xs.length - 1]!;
  };
  return { next, pick, weighted };
}

export interface GeneratedTicket extends Example {
  language: Lang;
  /** The template's topic (billing, login, outage, ...): what a search for it should find. */
  topic: string;
}

/**
 * `n` tickets from `seed`; `noise` is the share of each field's labels replaced by another
 * value (agents disagree; 0.1 unless said).
 */
export function generateTickets(n: number, seed = 1, noise = 0.1): GeneratedTicket[] {
  const r = rng(seed);
  const out: GeneratedTicket[] = [];
  for (let i = 0; i < n; i++) {
    const topic = r.weighted(TOPICS);
    const lang: Lang = r.next() < 0.75 ? 'en' : r.pick(['es', 'de', 'fr'] as Lang[]);
    const tier = r.weighted(TIERS);
    const domain = topic.spam ? r.pick(SPAM_DOMAINS) : r.pick(tier.domains);
    const urgent = !topic.spam && r.next() < 0.15;
    const subjects = topic.subjects[lang].length > 0 ? topic.subjects[lang] : topic.subjects.en;
    let subject = r.pick(subjects);
    if (urgent && r.next() < 0.5) subject = `${lang === 'en' ? 'URGENT' : 'URGENTE'}: ${subject}`;
    const details = [r.pick(topic.details), r.pick(topic.details)];
    const lines = [
      r.pick(OPEN[lang]),
      r.pick(BODY[lang]).replace('{d}', details[0]!),
      r.next() < 0.6 ? r.pick(BODY[lang]).replace('{d}', details[1]!) : '',
      urgent ? r.pick(URGENT[lang]) : '',
      r.pick(CLOSE[lang]),
    ].filter(Boolean);
    let p = PRIORITIES.indexOf(r.pick(topic.priority)) + (topic.spam ? 0 : tier.bump) + (urgent ? 1 : 0);
    p = Math.max(0, Math.min(3, p));
    const flip = <X>(v: X, all: X[]): X => (r.next() < noise ? r.pick(all) : v);
    const severity = r.pick(topic.severity);
    const breachOdds = [0.02, 0.05, 0.2, 0.4][p]!;
    const labels: Example['labels'] = topic.spam
      ? { spam: 'true' }
      : {
          priority: flip(PRIORITIES[p]!, PRIORITIES),
          severity: flip(severity ?? '', ['', 'sev1', 'sev2', 'sev3', 'sev4']),
          type_label: flip(topic.type ?? '', ['', 'Bug', 'Question', 'Incident', 'Feature request']),
          team: flip(topic.team ?? '', ['', 'Billing', 'Accounts', 'Engineering']),
          spam: 'false',
          sla_risk: r.next() < breachOdds ? 'true' : 'false',
        };
    out.push({
      language: lang,
      topic: topic.name,
      text: {
        subject,
        message: lines.join('\n'),
        domain,
        channel: r.pick(CHANNELS),
        mailboxId: r.pick(MAILBOXES),
      },
      labels,
    });
  }
  return out;
}
