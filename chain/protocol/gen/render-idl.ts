// Renders the schema as an IDL in Codama's format (a `rootNode`, built with
// @codama/nodes), so a third-party client or explorer decodes Sealpost's
// accounts and instructions and derives its PDAs without reading our code.
// Written to chain/protocol/idl.json by `npm run gen:protocol`.
import {
  accountNode,
  booleanTypeNode,
  bytesTypeNode,
  constantPdaSeedNodeFromString,
  errorNode,
  fieldDiscriminatorNode,
  fixedSizeTypeNode,
  instructionAccountNode,
  instructionArgumentNode,
  instructionNode,
  numberTypeNode,
  numberValueNode,
  optionTypeNode,
  pdaLinkNode,
  pdaNode,
  programNode,
  publicKeyTypeNode,
  publicKeyValueNode,
  type RootNode,
  rootNode,
  sizePrefixTypeNode,
  stringTypeNode,
  structFieldTypeNode,
  structTypeNode,
  type TypeNode,
  variablePdaSeedNode,
} from '@codama/nodes';
import {
  ACCOUNTS,
  type AccountSpec,
  ERRORS,
  type ErrorSpec,
  type FieldType,
  INSTRUCTIONS,
  type InstructionSpec,
  PROGRAM,
  SEEDS,
  type SeedPartSpec,
} from '../schema.ts';
import { accountOffsets } from './render-c.ts';

const SYSTEM_PROGRAM = '11111111111111111111111111111111';

function typeNode(t: FieldType): TypeNode {
  if (typeof t === 'object') {
    if ('bytes' in t) return fixedSizeTypeNode(bytesTypeNode(), t.bytes);
    return optionTypeNode(typeNode(t.option), { prefix: numberTypeNode('u8') });
  }
  switch (t) {
    case 'u8':
    case 'u64':
    case 'i64':
      return numberTypeNode(t, 'le');
    case 'bool':
      return booleanTypeNode(numberTypeNode('u8'));
    case 'key':
      return publicKeyTypeNode();
    case 'hash':
      return fixedSizeTypeNode(bytesTypeNode(), 32);
    case 'string':
      return sizePrefixTypeNode(stringTypeNode('utf8'), numberTypeNode('u32', 'le'));
  }
}

function seedTypeNode(t: SeedPartSpec['type']): TypeNode {
  return t === 'u64' ? numberTypeNode('u64', 'le') : typeNode(t);
}

const docs = (doc: string | undefined): string[] => (doc ? [doc] : []);
const firstLower = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);

/** The whole IDL. */
export function renderIdl(): RootNode {
  const pdas = Object.entries(SEEDS).map(([name, seed]) =>
    pdaNode({
      name,
      seeds: [
        constantPdaSeedNodeFromString('utf8', seed.prefix),
        ...seed.parts.map((p: SeedPartSpec) =>
          variablePdaSeedNode(p.name, seedTypeNode(p.type), docs(p.doc)),
        ),
      ],
    }),
  );
  const accounts = (Object.entries(ACCOUNTS) as [string, AccountSpec][]).map(([kind, spec]) => {
    const { fixed, variable } = accountOffsets(spec);
    return accountNode({
      name: firstLower(kind),
      ...(variable ? {} : { size: fixed }),
      pda: pdaLinkNode(spec.seed),
      discriminators: [fieldDiscriminatorNode('discriminator', 0)],
      data: structTypeNode([
        structFieldTypeNode({
          name: 'discriminator',
          type: numberTypeNode('u8'),
          defaultValue: numberValueNode(spec.tag),
          defaultValueStrategy: 'omitted',
        }),
        ...Object.entries(spec.fields).map(([name, field]) =>
          structFieldTypeNode({ name, type: typeNode(field.type), docs: docs(field.doc) }),
        ),
      ]),
    });
  });
  const instructions = (Object.entries(INSTRUCTIONS) as [string, InstructionSpec][]).map(([kind, spec]) =>
    instructionNode({
      name: firstLower(kind),
      optionalAccountStrategy: 'omitted',
      discriminators: [fieldDiscriminatorNode('discriminator', 0)],
      accounts: spec.accounts.map((a) =>
        instructionAccountNode({
          name: a.name,
          isSigner: a.signer,
          isWritable: a.writable,
          isOptional: a.when !== undefined,
          docs: docs(a.when ? `${a.doc ? `${a.doc}; ` : ''}present ${a.when}` : a.doc),
          ...(a.name === 'systemProgram'
            ? { defaultValue: publicKeyValueNode(SYSTEM_PROGRAM, 'systemProgram') }
            : {}),
        }),
      ),
      arguments: [
        instructionArgumentNode({
          name: 'discriminator',
          type: numberTypeNode('u8'),
          defaultValue: numberValueNode(spec.tag),
          defaultValueStrategy: 'omitted',
        }),
        ...Object.entries(spec.args).map(([name, arg]) =>
          instructionArgumentNode({ name, type: typeNode(arg.type), docs: docs(arg.doc) }),
        ),
      ],
    }),
  );
  const errors = (Object.entries(ERRORS) as [string, ErrorSpec][]).map(([name, spec]) =>
    errorNode({ name: firstLower(name), code: spec.code, message: spec.doc ?? name }),
  );
  return rootNode(
    programNode({
      name: PROGRAM.name,
      publicKey: PROGRAM.address,
      version: PROGRAM.version,
      pdas,
      accounts,
      instructions,
      errors,
    }),
  );
}

/** The IDL as written to chain/protocol/idl.json. */
export function renderIdlJson(): string {
  return `${JSON.stringify(renderIdl(), null, 2)}\n`;
}
