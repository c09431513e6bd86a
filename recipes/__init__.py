"""Recipes: paper experiments as files of ``adapter-zoo`` commands, and the quickstart."""

from recipes.recipe import Recipe, RecipeError, Step, load_recipe
from recipes.runner import find_recipe, recipe_dir, run_recipe

__all__ = [
    "Recipe",
    "RecipeError",
    "Step",
    "find_recipe",
    "load_recipe",
    "recipe_dir",
    "run_recipe",
]
