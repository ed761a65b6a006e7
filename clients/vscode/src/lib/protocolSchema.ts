/**
 * The `rag/*` protocol types, generated from the server's own schema (`ragls schema --protocol`,
 * the pydantic models in server/ragls/protocol.py): `make protocol` (scripts/gen-protocol.ts)
 * writes src/lib/protocol.generated.ts with it; protocolSchema.test.ts regenerates it from the
 * server under test and fails on any difference. No `vscode` import.
 */

/** A JSON Schema node, as far as pydantic writes them. */
export interface SchemaNode {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: SchemaNode[];
  items?: SchemaNode;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  additionalProperties?: boolean | SchemaNode;
  title?: string;
  description?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  default?: unknown;
}

/**
 * Why an input property of a tool (its JSON schema in package.json) does not fit the server's
 * param it is passed to: another type, or values it allows that the server rejects (wider
 * bounds, other enum values). A param that may be null is compared by its other branch.
 * [] when it fits; a tool may be stricter than the server.
 */
export function inputFieldProblems(tool: SchemaNode, param: SchemaNode): string[] {
  const branches = param.anyOf ? param.anyOf.filter((n) => n.type !== 'null') : [param];
  if (branches.length !== 1) return [`the param is one of ${branches.length} types`];
  const p = branches[0];
  const problems: string[] = [];
  const typeOf = (n: SchemaNode | undefined) => (n?.type === 'number' ? 'number' : n?.type);
  if (typeOf(tool) !== typeOf(p)) problems.push(`type ${tool.type} is not the param's ${p.type}`);
  if (p.type === 'array' && typeOf(tool.items) !== typeOf(p.items)) problems.push(`items of type ${tool.items?.type} are not the param's ${p.items?.type}`);
  if (p.enum) {
    const extra = (tool.enum ?? [undefined]).filter((v) => !p.enum!.includes(v));
    if (extra.length) problems.push(`allows ${extra.map((v) => JSON.stringify(v) ?? 'any value').join(', ')}, the param only ${p.enum.map((v) => JSON.stringify(v)).join(', ')}`);
  }
  const lower = (key: 'minimum' | 'minLength') => {
    if (p[key] !== undefined && !(tool[key] !== undefined && tool[key]! >= p[key]!)) problems.push(`${key} ${tool[key]} is below the param's ${p[key]}`);
  };
  const upper = (key: 'maximum' | 'maxLength' | 'maxItems') => {
    if (p[key] !== undefined && !(tool[key] !== undefined && tool[key]! <= p[key]!)) problems.push(`${key} ${tool[key]} is above the param's ${p[key]}`);
  };
  lower('minimum');
  lower('minLength');
  upper('maximum');
  upper('maxLength');
  upper('maxItems');
  return problems;
}

interface MethodEntry {
  kind: 'request' | 'notification';
  params: SchemaNode;
  result?: SchemaNode;
}

/** `ragls schema --protocol`. */
export interface ProtocolSchema {
  protocolVersion: number;
  methods: Record<string, MethodEntry>;
  $defs: Record<string, SchemaNode>;
}

const REF = '#/$defs/';

function literal(v: unknown): string {
  return typeof v === 'string' ? `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : JSON.stringify(v);
}

/** The TypeScript type of a schema node; objects with properties are written inline. */
export function tsType(node: SchemaNode, indent = ''): string {
  if (node.$ref) {
    if (!node.$ref.startsWith(REF)) throw new Error(`unsupported $ref ${node.$ref}`);
    return node.$ref.slice(REF.length);
  }
  if (node.anyOf) return node.anyOf.map((n) => tsType(n, indent)).join(' | ');
  if (node.const !== undefined) return literal(node.const);
  if (node.enum) return node.enum.map(literal).join(' | ');
  switch (node.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = node.items ? tsType(node.items, indent) : 'unknown';
      return /[ |]/.test(item) ? `(${item})[]` : `${item}[]`;
    }
    case 'object':
    case undefined: {
      const props = node.properties ?? {};
      if (Object.keys(props).length === 0) {
        const extra = node.additionalProperties;
        if (typeof extra === 'object') return `Record<string, ${tsType(extra, indent)}>`;
        return extra === false ? 'Record<string, never>' : 'Record<string, unknown>';
      }
      return `{\n${fields(node, indent + '  ')}${indent}}`;
    }
    default:
      throw new Error(`unsupported schema type ${node.type}`);
  }
}

function fields(node: SchemaNode, indent: string): string {
  const required = new Set(node.required ?? []);
  let out = '';
  for (const [name, prop] of Object.entries(node.properties ?? {})) {
    if (prop.description) out += `${indent}/** ${prop.description.replace(/\*\//g, '*\\/').split('\n').join(' ')} */\n`;
    const key = /^[A-Za-z_$][\w$]*$/.test(name) ? name : literal(name);
    out += `${indent}${key}${required.has(name) ? '' : '?'}: ${tsType(prop, indent)};\n`;
  }
  return out;
}

function declaration(name: string, node: SchemaNode): string {
  const doc = node.description ? `/** ${node.description.replace(/\*\//g, '*\\/').split('\n').join(' ')} */\n` : '';
  if (node.properties && Object.keys(node.properties).length > 0) {
    return `${doc}export interface ${name} {\n${fields(node, '  ')}}\n`;
  }
  return `${doc}export type ${name} = ${tsType(node)};\n`;
}

function pascal(method: string): string {
  return method
    .replace(/^rag\//, '')
    .replace(/(^|[^A-Za-z0-9])([a-z])/g, (_m, _p, c: string) => c.toUpperCase())
    .replace(/^[a-z]/, (c) => c.toUpperCase());
}

/** The source of src/lib/protocol.generated.ts for a schema. */
export function generateProtocol(schema: ProtocolSchema): string {
  const parts: string[] = [
    '// Generated by scripts/gen-protocol.ts from `ragls schema --protocol` (server/ragls/protocol.py).\n' +
      '// Do not edit: run `make protocol`; test/unit/protocolSchema.test.ts fails on any difference.\n' +
      '// Params: a field with a `?` may be left out. Results and notifications: this server sends every\n' +
      '// field; an older one lacks those added after it (docs/protocol.md, "Versions").\n',
    `/** The rag/* protocol version these types were generated from. */\nexport const GENERATED_PROTOCOL_VERSION = ${schema.protocolVersion};\n`,
  ];
  // The models the LSP's methods use (the owner socket's own are not the editors' business).
  const used = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      const ref = (node as SchemaNode).$ref;
      if (typeof ref === 'string' && ref.startsWith(REF) && !used.has(ref.slice(REF.length))) {
        used.add(ref.slice(REF.length));
        visit(schema.$defs[ref.slice(REF.length)]);
      }
      Object.values(node).forEach(visit);
    }
  };
  visit(schema.methods);
  for (const name of [...used].sort()) {
    parts.push(declaration(name, schema.$defs[name]));
  }
  // Inline params and results get a name of their own: <Method>Params / <Method>Result.
  const requests: string[] = [];
  const notifications: string[] = [];
  for (const [method, entry] of Object.entries(schema.methods)) {
    const ref = (node: SchemaNode, suffix: string): string => {
      if (node.$ref) return tsType(node);
      const name = `${pascal(method)}${suffix}`;
      parts.push(declaration(name, node));
      return name;
    };
    const params = ref(entry.params, 'Params');
    if (entry.kind === 'notification') {
      notifications.push(`  '${method}': ${params};\n`);
    } else {
      const result = entry.result ? ref(entry.result, 'Result') : 'null';
      requests.push(`  '${method}': { params: ${params}; result: ${result} };\n`);
    }
  }
  parts.push(`/** Each rag/* request of the LSP: its params and result. */\nexport interface RagRequests {\n${requests.join('')}}\n`);
  parts.push(`/** Each rag/* notification of the LSP (server -> client): its params. */\nexport interface RagNotifications {\n${notifications.join('')}}\n`);
  return parts.join('\n');
}
