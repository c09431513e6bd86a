"""Recipes: paper experiments as files of ``adapter-zoo`` commands, and the quickstart."""

from adapter_zoo.recipes.recipe import Recipe, RecipeError, Step, load_recipe
from adapter_zoo.recipes.runner import find_recipe, recipe_dir, run_recipe, shipped_data

__all__ = [
    "Recipe",
    "RecipeError",
    "Step",
    "find_recipe",
    "load_recipe",
    "recipe_dir",
    "run_recipe",
    "shipped_data",
]
