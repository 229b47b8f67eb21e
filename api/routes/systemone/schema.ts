import Joi from 'joi';

/** Structured content: a non-empty string, object or array (instructions, criteria values, levels). */
const content = Joi.alternatives().try(Joi.string().min(1), Joi.object().min(1), Joi.array().min(1));
const id = Joi.string().min(1).max(256);

const question = Joi.object({
  type: Joi.string().valid('noul', 'choice', 'score').required(),
  instructions: content.required(),
  criteria: Joi.when('type', {
    switch: [
      { is: 'noul', then: Joi.object({ true: content, false: content }).or('true', 'false') },
      { is: 'choice', then: Joi.object().pattern(id, content).min(1).max(255).required() },
      { is: 'score', then: Joi.array().items(content).min(1).max(10).required() },
    ],
  }),
});

/**
 * `POST /v1/systemone`. Unknown top-level fields (including `options`) and unknown question
 * fields are refused. Image rules are checked afterwards by the image walker (images.ts).
 */
export const systemoneSchema = Joi.object({
  model: Joi.string().min(1).max(256).required(),
  state: Joi.alternatives().try(Joi.string().min(1), Joi.object(), Joi.array()).required(),
  images: Joi.array().items(Joi.string()).max(1),
  questions: Joi.object().pattern(id, question).min(1).required(),
});
