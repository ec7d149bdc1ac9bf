// The utility messages a transaction carries: typed constructors and Any packing/unpacking.
import { create, fromBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { anyPack, type Any } from '@bufbuild/protobuf/wkt';
import { ActorType } from './gen/core/actor_pb.js';
import {
  MessageEditStakeSchema,
  MessageSendSchema,
  MessageStakeSchema,
  MessageUnpauseSchema,
  MessageUnstakeSchema,
  type MessageEditStake,
  type MessageSend,
  type MessageStake,
  type MessageUnpause,
  type MessageUnstake,
} from './gen/utility/message_pb.js';

export { ActorType };
export type { MessageEditStake, MessageSend, MessageStake, MessageUnpause, MessageUnstake };

/** Type URL prefix Go's `anypb.New` writes. */
export const TYPE_URL_PREFIX = 'type.googleapis.com/';

/** A utility message tagged with its V1 type name (the part of the type URL after `utility.`). */
export type PocketMessage =
  | { type: 'MessageStake'; message: MessageStake }
  | { type: 'MessageEditStake'; message: MessageEditStake }
  | { type: 'MessageUnstake'; message: MessageUnstake }
  | { type: 'MessageUnpause'; message: MessageUnpause }
  | { type: 'MessageSend'; message: MessageSend };
export type MessageTypeName = PocketMessage['type'];

/** Schema of each message type, keyed by V1 type name. */
export const messageSchemas = {
  MessageStake: MessageStakeSchema,
  MessageEditStake: MessageEditStakeSchema,
  MessageUnstake: MessageUnstakeSchema,
  MessageUnpause: MessageUnpauseSchema,
  MessageSend: MessageSendSchema,
} as const satisfies Record<MessageTypeName, DescMessage>;

function isMessageTypeName(name: string): name is MessageTypeName {
  return Object.hasOwn(messageSchemas, name);
}

export interface StakeFields {
  publicKey: Uint8Array;
  /** Decimal uPOKT amount. */
  amount: string;
  chains: readonly string[];
  /** `host:port`, verbatim (V1 does not validate it on the live path). */
  serviceUrl: string;
  outputAddress: Uint8Array;
  /** Set by `p1` to the signer's own address; V1 overwrites it with the real signer anyway. */
  signer?: Uint8Array;
  actorType?: ActorType;
}

/** A stake message as `p1 Validator Stake` builds it. */
export function stakeMessage(fields: StakeFields): PocketMessage {
  return {
    type: 'MessageStake',
    message: create(MessageStakeSchema, {
      actorType: fields.actorType ?? ActorType.VAL,
      publicKey: fields.publicKey,
      chains: [...fields.chains],
      amount: fields.amount,
      serviceUrl: fields.serviceUrl,
      outputAddress: fields.outputAddress,
      ...(fields.signer === undefined ? {} : { signer: fields.signer }),
    }),
  };
}

export interface EditStakeFields {
  address: Uint8Array;
  amount: string;
  chains: readonly string[];
  serviceUrl: string;
  signer?: Uint8Array;
  actorType?: ActorType;
}

/** An edit-stake message (V1 drops these at block time; the localnet node applies them). */
export function editStakeMessage(fields: EditStakeFields): PocketMessage {
  return {
    type: 'MessageEditStake',
    message: create(MessageEditStakeSchema, {
      actorType: fields.actorType ?? ActorType.VAL,
      address: fields.address,
      chains: [...fields.chains],
      amount: fields.amount,
      serviceUrl: fields.serviceUrl,
      ...(fields.signer === undefined ? {} : { signer: fields.signer }),
    }),
  };
}

export interface ActorFields {
  address: Uint8Array;
  signer?: Uint8Array;
  actorType?: ActorType;
}

/** An unstake message as `p1 Validator Unstake` builds it. */
export function unstakeMessage(fields: ActorFields): PocketMessage {
  return {
    type: 'MessageUnstake',
    message: create(MessageUnstakeSchema, {
      actorType: fields.actorType ?? ActorType.VAL,
      address: fields.address,
      ...(fields.signer === undefined ? {} : { signer: fields.signer }),
    }),
  };
}

/** An unpause message. */
export function unpauseMessage(fields: ActorFields): PocketMessage {
  return {
    type: 'MessageUnpause',
    message: create(MessageUnpauseSchema, {
      actorType: fields.actorType ?? ActorType.VAL,
      address: fields.address,
      ...(fields.signer === undefined ? {} : { signer: fields.signer }),
    }),
  };
}

export interface SendFields {
  fromAddress: Uint8Array;
  toAddress: Uint8Array;
  amount: string;
}

/** A send message. */
export function sendMessage(fields: SendFields): PocketMessage {
  return { type: 'MessageSend', message: create(MessageSendSchema, { ...fields }) };
}

/** Wraps a message in `Any` with the `type.googleapis.com/utility.<Name>` URL. */
export function packMessage(message: PocketMessage): Any {
  switch (message.type) {
    case 'MessageStake':
      return anyPack(MessageStakeSchema, message.message);
    case 'MessageEditStake':
      return anyPack(MessageEditStakeSchema, message.message);
    case 'MessageUnstake':
      return anyPack(MessageUnstakeSchema, message.message);
    case 'MessageUnpause':
      return anyPack(MessageUnpauseSchema, message.message);
    case 'MessageSend':
      return anyPack(MessageSendSchema, message.message);
  }
}

/** Why an `Any` could not be unpacked (becomes V1 error 4's detail). */
export class UnpackError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UnpackError';
  }
}

/**
 * Unpacks an `Any` into a typed message. Like Go's registry lookup, the type is the part of the
 * URL after the last `/`; unknown types and undecodable values throw `UnpackError`.
 */
export function unpackMessage(any: Any): PocketMessage {
  const fullName = any.typeUrl.slice(any.typeUrl.lastIndexOf('/') + 1);
  const [pkg, name] = fullName.split('.', 2);
  if (any.typeUrl === '' || pkg !== 'utility' || name === undefined || !isMessageTypeName(name)) {
    throw new UnpackError(`proto: not found: ${fullName === '' ? '(empty type URL)' : fullName}`);
  }
  try {
    return decodeAs(name, any.value);
  } catch (error: unknown) {
    throw new UnpackError(`proto: cannot parse invalid wire-format data (${errorText(error)})`, {
      cause: error,
    });
  }
}

function decodeAs(name: MessageTypeName, bytes: Uint8Array): PocketMessage {
  switch (name) {
    case 'MessageStake':
      return { type: name, message: parse(MessageStakeSchema, bytes) };
    case 'MessageEditStake':
      return { type: name, message: parse(MessageEditStakeSchema, bytes) };
    case 'MessageUnstake':
      return { type: name, message: parse(MessageUnstakeSchema, bytes) };
    case 'MessageUnpause':
      return { type: name, message: parse(MessageUnpauseSchema, bytes) };
    case 'MessageSend':
      return { type: name, message: parse(MessageSendSchema, bytes) };
  }
}

function parse<Desc extends DescMessage>(schema: Desc, bytes: Uint8Array): MessageShape<Desc> {
  return fromBinary(schema, bytes);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
