import Joi from 'joi';

/**
 * A name as OpenAI requires it of a function tool (FunctionObject: "a-z, A-Z, 0-9, or contain
 * underscores and dashes, with a maximum length of 64") and of a json_schema response format.
 */
export const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** A function tool's name, refused in those words when it is not one. */
export const openaiFunctionName = () =>
  Joi.string().pattern(OPENAI_NAME).required().messages({ 'string.pattern.base': '{{#label}} must be 1 to 64 of a-z, A-Z, 0-9, underscores and dashes' });
